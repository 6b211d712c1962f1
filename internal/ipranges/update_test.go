package ipranges

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
)

// publisher is a local server publishing ranges files by path; a path's
// body can be changed while it runs.
type publisher struct {
	mu    sync.Mutex
	files map[string]string
	hits  atomic.Int64
	*httptest.Server
}

func newPublisher(t *testing.T, files map[string]string) *publisher {
	p := &publisher{files: files}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		if r.URL.Path == "/moved.json" {
			http.Redirect(w, r, "/google.json", http.StatusMovedPermanently)
			return
		}
		p.mu.Lock()
		body, ok := p.files[r.URL.Path]
		p.mu.Unlock()
		switch {
		case !ok:
			http.NotFound(w, r)
		case body == "500":
			http.Error(w, "down", http.StatusInternalServerError)
		default:
			w.Write([]byte(body))
		}
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *publisher) set(path, body string) {
	p.mu.Lock()
	p.files[path] = body
	p.mu.Unlock()
}

func fetcher(allowPrivate bool) *access.Fetcher {
	return access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: allowPrivate}, UserAgent: "robotsproxy", Timeout: 10 * time.Second})
}

// Each supported format, served by a local server, is fetched through the
// proxy's fetcher and stored with its provenance; Load reads back what
// was stored.
func TestUpdateStoresEachFormat(t *testing.T) {
	pub := newPublisher(t, map[string]string{
		"/google.json": string(fixture(t, "googlebot-fixture.json")),
		"/ccbot.json":  string(fixture(t, "ccbot-fixture.json")),
		"/jafar.json":  jafarExample,
		"/plain.txt":   "# GPTBot\n20.171.206.0/24\n52.230.152.0/24\n",
	})
	srcs := []Source{
		{"google-common-crawlers", "Google", pub.URL + "/moved.json", []string{"Googlebot"}},
		{"commoncrawl-ccbot", "Common Crawl", pub.URL + "/ccbot.json", []string{"CCBot"}},
		{"example-jafar", "Example", pub.URL + "/jafar.json", []string{"ExampleBot"}},
		{"openai-gptbot", "OpenAI", pub.URL + "/plain.txt", []string{"GPTBot"}},
	}
	dir := t.TempDir()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	outs := Update(context.Background(), srcs, UpdateOptions{Fetcher: fetcher(true), DataDir: dir, Now: func() time.Time { return now }})
	for _, o := range outs {
		if o.Err != nil || o.Fresh || o.Record == nil {
			t.Fatalf("%s: %+v", o.Source.Name, o)
		}
	}
	if r := outs[0].Record; r.FinalURL != pub.URL+"/google.json" || r.URL != pub.URL+"/moved.json" || r.Prefixes != 7 ||
		r.CreationTime == nil || !r.CreationTime.Equal(time.Date(2023, 9, 26, 22, 0, 50, 0, time.UTC)) || r.FetchedAt.IsZero() {
		t.Errorf("google record %+v", r)
	}
	stored, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		format   string
		prefixes int
		ext      string
	}{
		"google-common-crawlers": {FormatGoogle, 7, ".json"},
		"commoncrawl-ccbot":      {FormatJAFAR, 5, ".json"},
		"example-jafar":          {FormatJAFAR, 4, ".json"},
		"openai-gptbot":          {FormatPlain, 2, ".txt"},
	}
	if len(stored) != len(want) {
		t.Fatalf("stored %d copies", len(stored))
	}
	for _, s := range stored {
		w := want[s.Name]
		if s.Format != w.format || s.Prefixes != w.prefixes || len(s.File.Prefixes) != w.prefixes || filepath.Ext(s.Path) != w.ext || len(s.Tokens) != 1 {
			t.Errorf("%s: %+v", s.Name, s.Record)
		}
		body, _ := os.ReadFile(s.Path)
		if s.Name == "commoncrawl-ccbot" && string(body) != string(fixture(t, "ccbot-fixture.json")) {
			t.Errorf("%s: the octets are not kept as fetched", s.Name)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, Dir)); err != nil || fi.Mode().Perm() != dirMode {
		t.Errorf("store directory: %v %v", fi, err)
	}
}

// A source that fails (not found, server error, an HTML page, a file that
// does not parse, a destination the guard refuses) fails alone, says why,
// and keeps its previous copy; a source fetched within the hour is not
// fetched again unless forced.
func TestUpdateFailuresKeepThePreviousCopy(t *testing.T) {
	google := string(fixture(t, "googlebot-fixture.json"))
	pub := newPublisher(t, map[string]string{"/a.json": google, "/b.json": google})
	srcs := []Source{{"a", "A", pub.URL + "/a.json", []string{"ABot"}}, {"b", "B", pub.URL + "/b.json", []string{"BBot"}}}
	dir := t.TempDir()
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	o := UpdateOptions{Fetcher: fetcher(true), DataDir: dir, Now: clock}
	for _, oc := range Update(context.Background(), srcs, o) {
		if oc.Err != nil {
			t.Fatal(oc.Err)
		}
	}
	before, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	hits := pub.hits.Load()
	for _, oc := range Update(context.Background(), srcs, o) {
		if !oc.Fresh || oc.Err != nil || oc.Record == nil {
			t.Errorf("within the hour: %+v", oc)
		}
	}
	if pub.hits.Load() != hits {
		t.Errorf("a fresh copy was fetched again")
	}
	tests := []struct {
		body, want string
	}{
		{"", "status 404"},
		{"500", "status 500"},
		{"<html><body>We moved</body></html>", "HTML"},
		{`{"creationTime":"2026-11-28T00:00:00Z","prefixes":[{"ipv4Prefix":"66.249.64.0/99"}]}`, "not a CIDR prefix"},
		{`{"creationTime":"2026-11-28T00:00:00Z","prefixes":[]}`, "no prefix"},
		{strings.Repeat(" ", MaxBody+1), "larger than"}, // a huge file is read no further than MaxBody
	}
	o.Force = true
	for _, tt := range tests {
		if tt.body == "" {
			pub.mu.Lock()
			delete(pub.files, "/a.json")
			pub.mu.Unlock()
		} else {
			pub.set("/a.json", tt.body)
		}
		outs := Update(context.Background(), srcs, o)
		if outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), tt.want) || outs[0].Record == nil || outs[0].Record.SHA256 != before[0].SHA256 {
			t.Errorf("%.40q: %+v, want %q and the previous copy", tt.body, outs[0], tt.want)
		}
		if outs[1].Err != nil {
			t.Errorf("%.40q: the other source failed too: %v", tt.body, outs[1].Err)
		}
		after, err := Load(dir)
		if err != nil || len(after) != 2 || after[0].SHA256 != before[0].SHA256 || after[0].Prefixes != 7 {
			t.Errorf("%.40q: after a failed update the store holds %+v, %v", tt.body, after, err)
		}
	}
	o.Fetcher = fetcher(false) // the proxy's default guard: loopback refused
	if outs := Update(context.Background(), srcs[1:], o); outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), "destination") {
		t.Errorf("guard: %+v", outs[0])
	}
	pub.set("/a.json", string(fixture(t, "bingbot-fixture.json")))
	o.Fetcher = fetcher(true)
	outs := Update(context.Background(), srcs[:1], o)
	ents, _ := os.ReadDir(filepath.Join(dir, Dir))
	if outs[0].Err != nil || outs[0].Record.Prefixes != 5 || len(ents) != 4 { // two records, two bodies: the replaced one removed
		t.Errorf("replaced: %+v, %d files", outs[0], len(ents))
	}
}

// A stored copy whose octets were changed or removed makes Load fail,
// naming it, rather than verify against something ipranges update did
// not fetch.
func TestLoadRefusesATamperedStore(t *testing.T) {
	dir := t.TempDir()
	f, _ := Parse(fixture(t, "googlebot-fixture.json"))
	rec, err := Save(dir, Record{Name: "google-common-crawlers", URL: "https://example.org/x.json", FetchedAt: time.Now()}, fixture(t, "googlebot-fixture.json"), f)
	if err != nil {
		t.Fatal(err)
	}
	body := filepath.Join(dir, Dir, rec.Body)
	os.WriteFile(body, []byte(`{"prefixes":[{"ipv4Prefix":"0.0.0.0/0"}]}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "does not hash") {
		t.Errorf("changed: %v", err)
	}
	os.Remove(body)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "google-common-crawlers") {
		t.Errorf("removed: %v", err)
	}
	if _, err := Save(dir, Record{Name: "../x"}, nil, f); err == nil {
		t.Error("a name with a path was saved")
	}
	if s, err := Load(t.TempDir()); err != nil || len(s) != 0 {
		t.Errorf("empty store: %v %v", s, err)
	}
}

func TestSelect(t *testing.T) {
	srcs, err := Select(Sources(), []string{"bing", "openai-gptbot"}, map[string]string{"bing": "http://127.0.0.1:1/b.json"})
	if err != nil || len(srcs) != 2 || srcs[0].URL != "http://127.0.0.1:1/b.json" || srcs[1].URL != "https://openai.com/gptbot.json" {
		t.Errorf("%+v %v", srcs, err)
	}
	if _, err := Select(Sources(), []string{"bingo"}, nil); err == nil || !strings.Contains(err.Error(), "google-common-crawlers") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Select(Sources(), nil, map[string]string{"x": "y"}); err == nil {
		t.Error("unknown URL override")
	}
	if Sources()[0].URL != "https://developers.google.com/static/crawling/ipranges/common-crawlers.json" {
		t.Error("Google's common crawlers are not at the path Google moved them to")
	}
	seen := map[string]bool{}
	for _, s := range Sources() {
		if seen[s.Name] || !storedName.MatchString(s.Name) || len(s.Tokens) == 0 || !strings.HasPrefix(s.URL, "https://") {
			t.Errorf("source %+v", s)
		}
		seen[s.Name] = true
	}
}
