package robots_test

import (
	"bytes"
	"compress/gzip"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/robots"
)

// Real bodies that are not robots.txt text, as sites served them
// (testdata/robots-odd), and bodies made from real files: each is named
// for what it is. Every real robots.txt in testdata/robots, legacy
// charsets and stray octets included, is text.
func TestNotText(t *testing.T) {
	acm, err := os.ReadFile(filepath.Join("..", "testdata", "robots", "dl.acm.org.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(acm)
	zw.Close()
	noise := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.IntN(256))
	}
	// Latin-1 octets, none of them valid UTF-8 on its own: more than half
	// the body.
	latin1 := bytes.Repeat([]byte("\xe9\xe8\xe0"), 100)
	tests := []struct {
		name string
		body []byte
		want string // a part of the answer; "" for text
	}{
		{"real gzip body", readOdd(t, "schema.org.txt"), "gzip-compressed data"},
		{"real gzip body 2", readOdd(t, "lyoness.com.txt"), "gzip-compressed data"},
		{"real UTF-16 body", readOdd(t, "reddbarna.no.txt"), "UTF-16"},
		{"real UTF-16 body 2", readOdd(t, "telekom.ro.txt"), "UTF-16"},
		{"real HTML page", readOdd(t, "webalive.be.txt"), ""},
		{"gzipped robots.txt", gz.Bytes(), "gzip-compressed data"},
		{"NUL octets", append([]byte("User-agent: *\nDisallow: /\x00\n"), acm...), "NUL octets"},
		{"random octets", noise, "NUL octets"},
		{"control characters", bytes.Repeat([]byte("\x01\x02a"), 100), "mostly invalid UTF-8"},
		{"mostly invalid UTF-8", append([]byte("User-agent: *\n"), latin1...), "mostly invalid UTF-8"},
		{"some invalid UTF-8", append(append([]byte(nil), acm...), latin1...), ""},
		{"empty", nil, ""},
		{"plain", []byte("User-agent: *\nDisallow: /private/\n"), ""},
		{"BOM and CRLF", []byte("\xef\xbb\xbfUser-agent: *\r\nDisallow: /\r\n"), ""},
	}
	for _, tt := range tests {
		got := robots.NotText(tt.body)
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: NotText = %q, want %q", tt.name, got, tt.want)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "testdata", "robots", "*.txt"))
	if err != nil || len(files) < 40 {
		t.Fatalf("testdata/robots: %d files, %v", len(files), err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if why := robots.NotText(b); why != "" {
			t.Errorf("%s: a real robots.txt is %q", f, why)
		}
	}
}

func readOdd(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "robots-odd", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
