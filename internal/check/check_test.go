package check_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/check"
)

// robotsTxt is the file most tests decide against; the comments give the
// line numbers that outputs refer to.
const robotsTxt = `User-agent: ExampleBot
Disallow: /private/
Allow: /private/public.html

User-agent: *
Disallow: /tmp/
Disallow: /*.pdf$
`

const (
	uaExampleBot = "Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)"
	uaGooglebot  = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
	uaChrome     = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36"
)

// writeRobots writes body to a temporary robots.txt file and returns its
// path.
func writeRobots(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunText(t *testing.T) {
	tests := []struct {
		name    string
		robots  string
		ua      string
		urls    []string
		want    []string
		wantAll bool
	}{
		{
			name:   "named group, full User-Agent header",
			robots: robotsTxt,
			ua:     uaExampleBot,
			urls: []string{
				"http://example.com/private/x",
				"http://example.com/private/public.html",
				"http://example.com/tmp/x",
				"http://example.com/robots.txt",
			},
			want: []string{
				"DISALLOWED http://example.com/private/x\tgroup examplebot: line 2: Disallow: /private/",
				"ALLOWED http://example.com/private/public.html\tgroup examplebot: line 3: Allow: /private/public.html",
				"ALLOWED http://example.com/tmp/x\tgroup examplebot: no matching rule",
				"ALLOWED http://example.com/robots.txt\t/robots.txt is always allowed",
			},
		},
		{
			name:   "bare product token, case-insensitive",
			robots: robotsTxt,
			ua:     "examplebot",
			urls:   []string{"https://example.com/private/"},
			want:   []string{"DISALLOWED https://example.com/private/\tgroup examplebot: line 2: Disallow: /private/"},
		},
		{
			name:   "star fallback",
			robots: robotsTxt,
			ua:     uaGooglebot,
			urls:   []string{"http://example.com/tmp/a?b=c", "http://example.com/doc.pdf", "http://example.com/doc.pdf?x", "http://example.com/private/x"},
			want: []string{
				"DISALLOWED http://example.com/tmp/a?b=c\tgroup * (fallback): line 6: Disallow: /tmp/",
				"DISALLOWED http://example.com/doc.pdf\tgroup * (fallback): line 7: Disallow: /*.pdf$",
				"ALLOWED http://example.com/doc.pdf?x\tgroup * (fallback): no matching rule",
				"ALLOWED http://example.com/private/x\tgroup * (fallback): no matching rule",
			},
		},
		{
			name:   "browser User-Agent has no crawler token",
			robots: robotsTxt,
			ua:     uaChrome,
			urls:   []string{"http://example.com/tmp/"},
			want:   []string{"DISALLOWED http://example.com/tmp/\tgroup * (fallback): line 6: Disallow: /tmp/"},
		},
		{
			name:   "empty User-Agent",
			robots: robotsTxt,
			ua:     "",
			urls:   []string{"http://example.com/"},
			want:   []string{"ALLOWED http://example.com/\tgroup * (fallback): no matching rule"},
			// all allowed
		},
		{
			name:   "no group applies",
			robots: "User-agent: OtherBot\nDisallow: /\n",
			ua:     uaGooglebot,
			urls:   []string{"http://example.com/x"},
			want:   []string{"ALLOWED http://example.com/x\tno group applies"},
		},
		{
			name:   "paths, fragments, percent-encoding and CRLF",
			robots: "User-agent: *\r\nDisallow: /a%3cd\r\nDisallow: /%7Euser/\r\n",
			ua:     "AnyBot",
			urls:   []string{"/a%3Cd", "http://example.com/~user/x#frag", "http://example.com/b#/a%3cd"},
			want: []string{
				"DISALLOWED /a%3Cd\tgroup * (fallback): line 2: Disallow: /a%3cd",
				"DISALLOWED http://example.com/~user/x#frag\tgroup * (fallback): line 3: Disallow: /%7Euser/",
				"ALLOWED http://example.com/b#/a%3cd\tgroup * (fallback): no matching rule",
			},
		},
		{
			name:   "a group that names a crawler whole (the name rule)",
			robots: "User-agent: MJ12bot\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
			ua:     "Mozilla/5.0 (compatible; MJ12bot/v1.4.8; http://mj12bot.com/)",
			urls:   []string{"http://example.com/x"},
			want:   []string{"DISALLOWED http://example.com/x\tgroup mj12bot: line 2: Disallow: /"},
		},
		{
			name:   "a name that starts with a digit",
			robots: "User-agent: 360Spider\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
			ua:     "Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0); 360Spider",
			urls:   []string{"http://example.com/x"},
			want:   []string{"DISALLOWED http://example.com/x\tgroup 360spider: line 2: Disallow: /"},
		},
		{
			name:   "empty file allows everything",
			robots: "",
			ua:     uaGooglebot,
			urls:   []string{"http://example.com/"},
			want:   []string{"ALLOWED http://example.com/\tno group applies"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeRobots(t, tt.robots)
			var out bytes.Buffer
			all, err := check.Run(path, tt.ua, tt.urls, check.Options{Stdout: &out})
			if err != nil {
				t.Fatalf("Run(%q, %q): %v", tt.ua, tt.urls, err)
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Run(%q, %q) output:\ngot  %q\nwant %q", tt.ua, tt.urls, got, tt.want)
			}
			wantAll := true
			for _, w := range tt.want {
				wantAll = wantAll && strings.HasPrefix(w, "ALLOWED ")
			}
			if all != wantAll {
				t.Errorf("Run(%q, %q): got allowed-all %v, want %v", tt.ua, tt.urls, all, wantAll)
			}
		})
	}
}

// noExtras ends the JSON line of a URL when the file has no other records
// and no Content-Usage rule applies.
const noExtras = `,"crawl_delay":null,"request_rate":null,"sitemaps":[],"content_signal":null,` +
	`"content_usage":{"rules":[],"preferences":{"search":{"pref":"unknown"},"train-ai":{"pref":"unknown"}}}`

func TestRunJSON(t *testing.T) {
	path := writeRobots(t, robotsTxt)
	tests := []struct {
		ua   string
		url  string
		want string // the whole JSON line
	}{
		{
			ua:   uaExampleBot,
			url:  "http://example.com/private/x",
			want: `{"url":"http://example.com/private/x","allowed":false,"product_tokens":["ExampleBot"],"group":"examplebot","groups":[{"line":1,"agents":["ExampleBot"]}],"rule":{"text":"Disallow: /private/","line":2,"allow":false},"star_fallback":false}`,
		},
		{
			ua:   uaExampleBot,
			url:  "http://example.com/private/public.html",
			want: `{"url":"http://example.com/private/public.html","allowed":true,"product_tokens":["ExampleBot"],"group":"examplebot","groups":[{"line":1,"agents":["ExampleBot"]}],"rule":{"text":"Allow: /private/public.html","line":3,"allow":true},"star_fallback":false}`,
		},
		{
			ua:   uaGooglebot,
			url:  "http://example.com/tmp/",
			want: `{"url":"http://example.com/tmp/","allowed":false,"product_tokens":["Googlebot"],"group":"*","groups":[{"line":5,"agents":["*"]}],"rule":{"text":"Disallow: /tmp/","line":6,"allow":false},"star_fallback":true}`,
		},
		{
			ua:   "",
			url:  "http://example.com/open",
			want: `{"url":"http://example.com/open","allowed":true,"product_tokens":[],"group":"*","groups":[{"line":5,"agents":["*"]}],"star_fallback":true}`,
		},
		{
			ua:   uaGooglebot,
			url:  "http://example.com/robots.txt",
			want: `{"url":"http://example.com/robots.txt","allowed":true,"product_tokens":["Googlebot"],"groups":[],"star_fallback":false,"implicit_robots_txt":true}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			var out bytes.Buffer
			all, err := check.Run(path, tt.ua, []string{tt.url}, check.Options{JSON: true, Stdout: &out})
			if err != nil {
				t.Fatalf("Run(-json, %q, %q): %v", tt.ua, tt.url, err)
			}
			line := strings.TrimSuffix(out.String(), "\n")
			if strings.Contains(line, "\n") {
				t.Fatalf("Run(-json, %q, %q): got several lines %q, want one", tt.ua, tt.url, out.String())
			}
			var got, want map[string]any
			if err := json.Unmarshal([]byte(line), &got); err != nil {
				t.Fatalf("Run(-json, %q, %q): output %q is not JSON: %v", tt.ua, tt.url, line, err)
			}
			wantLine := strings.TrimSuffix(tt.want, "}") + noExtras + "}"
			if err := json.Unmarshal([]byte(wantLine), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Run(-json, %q, %q):\ngot  %s\nwant %s", tt.ua, tt.url, line, wantLine)
			}
			for _, field := range []string{"url", "allowed", "product_tokens", "groups", "star_fallback"} {
				if _, ok := got[field]; !ok {
					t.Errorf("Run(-json, %q, %q): got %s, want field %q", tt.ua, tt.url, line, field)
				}
			}
			if wantAll := want["allowed"] == true; all != wantAll {
				t.Errorf("Run(-json, %q, %q): got allowed-all %v, want %v", tt.ua, tt.url, all, wantAll)
			}
		})
	}
}

func TestRunStdin(t *testing.T) {
	path := writeRobots(t, robotsTxt)
	const n = 10000
	var in strings.Builder
	var want []string
	want = append(want, "DISALLOWED http://example.com/tmp/first")
	for i := range n {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&in, "http://example.com/tmp/%d\n", i)
			want = append(want, fmt.Sprintf("DISALLOWED http://example.com/tmp/%d", i))
		case 1:
			fmt.Fprintf(&in, "  http://example.com/ok/%d\t\r\n", i) // trimmed
			want = append(want, fmt.Sprintf("ALLOWED http://example.com/ok/%d", i))
		case 2:
			in.WriteString("\n   \n") // blank lines are skipped
		case 3:
			fmt.Fprintf(&in, "/f%d.pdf\n", i)
			want = append(want, fmt.Sprintf("DISALLOWED /f%d.pdf", i))
		}
	}
	in.WriteString("http://example.com/no-final-newline")
	want = append(want, "ALLOWED http://example.com/no-final-newline", "ALLOWED http://example.com/last")

	var out bytes.Buffer
	urls := []string{"http://example.com/tmp/first", "-", "http://example.com/last"}
	all, err := check.Run(path, "AnyBot", urls, check.Options{Stdin: strings.NewReader(in.String()), Stdout: &out})
	if err != nil {
		t.Fatalf("Run(%q) with %d stdin lines: %v", urls, n, err)
	}
	if all {
		t.Errorf("Run(%q): got allowed-all true, want false", urls)
	}
	var got []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		word, _, _ := strings.Cut(sc.Text(), "\t")
		got = append(got, word)
	}
	if len(got) != len(want) {
		t.Fatalf("Run(%q): got %d output lines, want %d", urls, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("output line %d: got %q, want %q", i+1, got[i], want[i])
		}
	}
}

// TestRunStdinKeepsUnicodeSpaces: a URL read from stdin loses its line
// terminator and the ASCII white space around it, never a Unicode space
// that is part of it.
func TestRunStdinKeepsUnicodeSpaces(t *testing.T) {
	path := writeRobots(t, "User-agent: *\nDisallow: /a\u00a0\nDisallow: /\u3000b\nDisallow: /c\u2003$\n")
	tests := []struct {
		name, line, want string
	}{
		{"trailing no-break space", "http://example.com/a\u00a0\n", "DISALLOWED http://example.com/a\u00a0"},
		{"no-break space before CRLF and tab", " \thttp://example.com/a\u00a0 \t\r\n", "DISALLOWED http://example.com/a\u00a0"},
		{"ideographic space inside a path", "/\u3000b/x\r\n", "DISALLOWED /\u3000b/x"},
		{"trailing em space, anchored", "http://example.com/c\u2003\v\f\n", "DISALLOWED http://example.com/c\u2003"},
		{"no Unicode space", "http://example.com/a\n", "ALLOWED http://example.com/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := check.Run(path, "AnyBot", []string{"-"}, check.Options{Stdin: strings.NewReader(tt.line), Stdout: &out})
			if err != nil {
				t.Fatalf("Run with stdin %q: %v", tt.line, err)
			}
			if got, _, _ := strings.Cut(out.String(), "\t"); got != tt.want {
				t.Errorf("stdin %q: got %q, want %q", tt.line, got, tt.want)
			}
		})
	}
}

func TestRunAllowedAll(t *testing.T) {
	path := writeRobots(t, robotsTxt)
	tests := []struct {
		name string
		urls []string
		json bool
		want bool
	}{
		{"all allowed", []string{"http://example.com/", "http://example.com/a"}, false, true},
		{"one disallowed", []string{"http://example.com/", "http://example.com/tmp/", "http://example.com/a"}, false, false},
		{"one disallowed, json", []string{"http://example.com/tmp/", "http://example.com/a"}, true, false},
		{"all allowed, json", []string{"http://example.com/a"}, true, true},
		{"no URLs", nil, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			got, err := check.Run(path, "AnyBot", tt.urls, check.Options{JSON: tt.json, Stdout: &out})
			if err != nil {
				t.Fatalf("Run(%q): %v", tt.urls, err)
			}
			if got != tt.want {
				t.Errorf("Run(%q): got allowed-all %v, want %v", tt.urls, got, tt.want)
			}
			if lines := strings.Count(out.String(), "\n"); lines != len(tt.urls) {
				t.Errorf("Run(%q): got %d output lines, want %d", tt.urls, lines, len(tt.urls))
			}
		})
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRunErrors(t *testing.T) {
	path := writeRobots(t, robotsTxt)
	missing := filepath.Join(t.TempDir(), "missing.txt")
	tests := []struct {
		name  string
		path  string
		urls  []string
		stdin io.Reader
		out   io.Writer
		want  string // in the error
		is    error
	}{
		{name: "missing file", path: missing, urls: []string{"http://example.com/"}, out: io.Discard, want: "missing.txt", is: fs.ErrNotExist},
		{name: "directory", path: filepath.Dir(path), urls: []string{"http://example.com/"}, out: io.Discard, want: "read robots.txt"},
		{name: "stdin line over 1 MiB", path: path, urls: []string{"-"}, stdin: strings.NewReader("/a\n" + strings.Repeat("x", 2<<20) + "\n"), out: io.Discard, want: "stdin"},
		{name: "stdin read error", path: path, urls: []string{"-"}, stdin: io.MultiReader(strings.NewReader("/a\n"), errReader{}), out: io.Discard, want: "boom"},
		{name: "write error", path: path, urls: []string{"http://example.com/"}, out: failingWriter{}, want: "disk full"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			all, err := check.Run(tt.path, "AnyBot", tt.urls, check.Options{Stdin: tt.stdin, Stdout: tt.out})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run(%s, %q): got allowed-all %v and error %v, want an error containing %q", tt.path, tt.urls, all, err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("Run(%s, %q): got error %v, want one wrapping %v", tt.path, tt.urls, err, tt.is)
			}
			if all {
				t.Errorf("Run(%s, %q): got allowed-all true with an error, want false", tt.path, tt.urls)
			}
		})
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("boom") }

// lineCounter discards what it is given and counts newlines.
type lineCounter struct{ n atomic.Int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

func heapInuse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// TestRunStreamsStdin feeds a million URLs through "-" and checks that Run
// keeps its memory flat: it must decide each line as it is read rather than
// collect them. The heap is measured while Run is still reading, after
// most of the input has gone through, and again after it returns.
func TestRunStreamsStdin(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED: streams 1,000,000 URLs; not run with -short")
	}
	const n, maxGrowth = 1_000_000, 16 << 20
	path := writeRobots(t, robotsTxt)
	before := heapInuse()

	pr, pw := io.Pipe()
	defer pr.Close() // unblocks the writer if Run stops early
	mid := make(chan uint64, 1)
	go func() {
		defer func() {
			select {
			case mid <- 0: // the writer stopped before measuring
			default:
			}
		}()
		w := bufio.NewWriter(pw)
		for i := range n {
			if i == n*9/10 {
				// Everything written so far has reached Run through the
				// pipe: a Run that kept its input would hold it now.
				if err := w.Flush(); err != nil {
					pw.CloseWithError(err)
					return
				}
				mid <- heapInuse()
			}
			if i%2 == 0 {
				fmt.Fprintf(w, "http://example.com/tmp/page-%d?session=%d\n", i, i*7919)
			} else {
				fmt.Fprintf(w, "http://example.com/articles/%d/some-longer-slug-for-the-article\n", i)
			}
		}
		pw.CloseWithError(w.Flush())
	}()

	out := &lineCounter{}
	all, err := check.Run(path, uaGooglebot, []string{"-"}, check.Options{Stdin: pr, Stdout: out})
	if err != nil {
		t.Fatalf("Run with %d stdin URLs: %v", n, err)
	}
	if all {
		t.Errorf("Run with %d stdin URLs: got allowed-all true, want false", n)
	}
	if got := out.n.Load(); got != n {
		t.Errorf("Run with %d stdin URLs: got %d output lines, want %d", n, got, n)
	}
	during, after := <-mid, heapInuse()
	for _, m := range []struct {
		when string
		v    uint64
	}{{"while reading", during}, {"after Run", after}} {
		if m.v > before && m.v-before > maxGrowth {
			t.Errorf("heap in use %s: got %d MiB more than before, want under %d MiB", m.when, (m.v-before)>>20, maxGrowth>>20)
		}
	}
	t.Logf("heap in use: before %d KiB, while reading %d KiB, after %d KiB", before>>10, during>>10, after>>10)
}
