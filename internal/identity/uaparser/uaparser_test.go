package uaparser_test

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/identity/uaparser"
	"github.com/robotsproxy/robotsproxy/internal/identity/upstream"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// testdata is the repository's testdata folder.
var testdata = filepath.Join("..", "..", "..", "testdata")

// TestEmbeddedIsBuilt: the embedded data is what Build makes of
// testdata/agents/uap-core/regexes.yaml at the commit MANIFEST.tsv gives,
// so that nothing in it is written by hand and "go generate" reproduces
// it; it carries uap-core's licence.
func TestEmbeddedIsBuilt(t *testing.T) {
	data, src, err := uaparser.ReadInput(filepath.Join(testdata, "agents"), filepath.Join(testdata, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := uaparser.Build(data, src)
	if err != nil {
		t.Fatal(err)
	}
	want, err := uaparser.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join("data", "regexes.yaml")); err != nil || !bytes.Equal(got, want) {
		t.Errorf("data/regexes.yaml is not what testdata/agents/uap-core builds (%v): run go generate ./internal/identity/...", err)
	}
	if got, err := os.ReadFile(filepath.Join("data", "LICENSE.uap-core")); err != nil || string(got) != src.LicenseText {
		t.Errorf("data/LICENSE.uap-core: not uap-core's licence (%v)", err)
	}
	p := uaparser.Embedded()
	s := p.Source
	if p.Families != len(f.Families) || p.Families < 400 || p.Spiders != len(f.Spiders) || p.Spiders == 0 ||
		s.Repository != "ua-parser/uap-core" || s.Path != "regexes.yaml" || len(s.Commit) != 40 ||
		s.License != "Apache-2.0" || !strings.Contains(s.LicenseText, "Apache License") {
		t.Errorf("embedded: %d family rules, %d spider rules, source %+v", p.Families, p.Spiders, s)
	}
	if uaparser.EmbeddedSource() != s {
		t.Errorf("EmbeddedSource %+v, want %+v", uaparser.EmbeddedSource(), s)
	}
	if v := s.Version(); v != "uap-core@"+s.Commit[:12] {
		t.Errorf("version %q", v)
	}
}

// TestUAPCoreTestCases: every case of uap-core's own user agent tests
// (tests/test_ua.yaml, of the same commit as regexes.yaml) gets the
// family the case expects: the parser implements uap-core's
// specification as its reference implementations do.
func TestUAPCoreTestCases(t *testing.T) {
	cases := testkit.UAPCoreCases(t, testdata)
	p := uaparser.Embedded()
	for _, c := range cases {
		if got := p.Family(c.UA); got != c.Family {
			t.Errorf("Family(%q) = %q, want %q", c.UA, got, c.Family)
		}
	}
	if len(cases) < 1000 {
		t.Errorf("%d cases, want the whole file", len(cases))
	}
}

// TestRules: data of regexes.yaml's layout, as Parse reads it: family
// replacements, flags and spiders as uap-core's specification gives
// them; a rule Go's regexp rejects is an error, not a panic.
func TestRules(t *testing.T) {
	p, err := uaparser.Parse([]byte(`
source: {repository: example/rules, commit: abc}
user_agent_parsers:
  - regex: '(NCSA_Mosaic)/(\d+)\.(\d+)'
    family_replacement: 'NCSA Mosaic'
  - regex: '(Namoroka|Minefield)/(\d+)'
    family_replacement: 'Firefox ($1)'
  - regex: '(konqueror)/(\d+)'
    regex_flag: 'i'
    family_replacement: 'Konqueror'
  - regex: '(empty)?gap/(\d+)'
  - regex: '(Links) \((\d+)'
device_parsers:
  - regex: '(bot|crawl)'
    regex_flag: 'i'
    device_replacement: 'Spider'
`), "the licence")
	if err != nil {
		t.Fatal(err)
	}
	for ua, want := range map[string]string{
		"NCSA_Mosaic/2.0 (Windows 3.1)":            "NCSA Mosaic",
		"Mozilla/5.0 Gecko/20100101 Minefield/4.0": "Firefox (Minefield)",
		"gap/1 Links (2.1pre15; FreeBSD)":          "Links", // an empty family passes to the next rule
		"KONQUEROR/4":                              "Konqueror",
		"curl/8.0":                                 uaparser.Other,
	} {
		if got := p.Family(ua); got != want {
			t.Errorf("Family(%q) = %q, want %q", ua, got, want)
		}
	}
	if !p.Spider("ExampleBOT/1.0") || p.Spider("curl/8.0") {
		t.Error("Spider: want ExampleBOT and not curl")
	}
	if p.Families != 5 || p.Spiders != 1 || p.Source.Repository != "example/rules" || p.Source.LicenseText != "the licence" {
		t.Errorf("parsed %d families, %d spiders, source %+v", p.Families, p.Spiders, p.Source)
	}
	for _, bad := range []string{"user_agent_parsers:\n  - regex: '(?<=a)b'\n", "user_agent_parsers: [", "device_parsers:\n  - regex: '(a'\n"} {
		if _, err := uaparser.Parse([]byte(bad), ""); err == nil {
			t.Errorf("Parse(%q): want an error", bad)
		}
	}
}

// BenchmarkParse measures the first use of the data: decoding
// data/regexes.yaml and compiling its rules (once per process).
func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("data", "regexes.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := uaparser.Parse(data, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFamily measures naming the family of a header (a browser of
// no browser's shape, a library, a header no rule matches) and asking
// whether it is a spider: what Recognise asks once per such header.
func BenchmarkFamily(b *testing.B) {
	p := uaparser.Embedded()
	uas := []string{"J2ME/UCWEB7.0.3.45/139/7682", "aws-sdk-go/1.44.0 (go1.20; linux; amd64)", "ExampleFetcher/1.0"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ua := uas[i%len(uas)]
		p.Family(ua)
		p.Spider(ua)
	}
}

// TestRefresh: the refresh that gen -update uap-core=COMMIT makes
// downloads regexes.yaml, tests/test_ua.yaml and LICENSE at that commit,
// by the repository and paths of their MANIFEST.tsv rows, and what it
// writes builds.
func TestRefresh(t *testing.T) {
	rows, err := os.ReadFile(filepath.Join(testdata, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	manifest := filepath.Join(dir, "MANIFEST.tsv")
	os.WriteFile(manifest, rows, 0o644)
	os.MkdirAll(filepath.Join(dir, "agents", "uap-core"), 0o755)
	regexes, _ := os.ReadFile(filepath.Join(testdata, "agents", "uap-core", "regexes.yaml"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ua-parser/uap-core/abc/regexes.yaml":
			w.Write(regexes)
		case "/ua-parser/uap-core/abc/tests/test_ua.yaml":
			w.Write([]byte("test_cases: []\n"))
		case "/ua-parser/uap-core/abc/LICENSE":
			w.Write([]byte("Apache License 2.0"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	agents := filepath.Join(dir, "agents")
	if err := upstream.Update(srv.Client(), srv.URL, agents, manifest, []upstream.Source{uaparser.Upstream}, map[string]string{"uap-core": "abc"}); err != nil {
		t.Fatal(err)
	}
	data, src, err := uaparser.ReadInput(agents, manifest)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uaparser.Build(data, src); err != nil || src.Commit != "abc" || src.LicenseText != "Apache License 2.0" {
		t.Errorf("after the refresh: %v, source %+v", err, src)
	}
	if err := upstream.Update(srv.Client(), srv.URL, agents, manifest, []upstream.Source{uaparser.Upstream}, map[string]string{"uap-core": "missing"}); err == nil {
		t.Error("a commit the server lacks: want an error")
	}
}
