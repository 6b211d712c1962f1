package license_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// siteLicense is the RSL document most cases are decided under.
const siteLicense = `<?xml version="1.0" encoding="UTF-8"?>
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <permits type="usage">all</permits>
      <prohibits type="usage">ai-train</prohibits>
    </license>
  </content>
  <content url="/docs/*.pdf$">
    <license>
      <permits type="usage">search</permits>
    </license>
  </content>
  <content url="/open/">
    <license/>
  </content>
  <content url="https://example.com/paid/" server="https://rsl.example.com/api">
    <license>
      <permits type="usage">ai-input, search</permits>
      <permits type="geo">US</permits>
    </license>
  </content>
  <content url="https://other.example/" server="https://x">
    <license><prohibits type="usage">all</prohibits></license>
  </content>
</rsl>`

const scopedLicense = `<rsl><content url="/blog/"><license><prohibits type="usage">ai-all</prohibits></license></content></rsl>`

func TestDecide(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		body     string
		host     string
		path     string
		purposes []string
		want     policy.LicenseDecision
		element  string
		refused  string
	}{
		{"permits", 200, siteLicense, "example.com", "/a", []string{"search", "ai-input"}, policy.LicensePermitted, `<content url="/">`, ""},
		{"prohibits", 200, siteLicense, "example.com", "/a", []string{"search", "train-ai"}, policy.LicenseProhibited, `<content url="/">`, "train-ai"},
		{"permits list is exhaustive", 200, siteLicense, "example.com", "/docs/x.pdf", []string{"ai-input"}, policy.LicenseProhibited, `<content url="/docs/*.pdf$">`, "ai-input"},
		{"longest match scopes the path", 200, siteLicense, "example.com", "/docs/x.pdf", []string{"search"}, policy.LicensePermitted, `<content url="/docs/*.pdf$">`, ""},
		{"the $ anchor ends the match", 200, siteLicense, "example.com", "/docs/x.pdf?v=1", []string{"train-ai"}, policy.LicenseProhibited, `<content url="/">`, "train-ai"},
		{"a license without terms permits all", 200, siteLicense, "example.com", "/open/a", []string{"train-ai"}, policy.LicensePermitted, `<content url="/open/">`, ""},
		{"server requires a token", 200, siteLicense, "Example.COM:8080", "/paid/x", []string{"ai-input"}, policy.LicenseRequired, `<content url="https://example.com/paid/" server="https://rsl.example.com/api">`, ""},
		{"prohibited before server", 200, siteLicense, "example.com", "/paid/x", []string{"train-ai"}, policy.LicenseProhibited, `<content url="https://example.com/paid/" server="https://rsl.example.com/api">`, "train-ai"},
		{"absolute url of another host", 200, siteLicense, "example.com", "/x", []string{"search"}, policy.LicensePermitted, `<content url="/">`, ""},
		{"no matching content", 200, scopedLicense, "example.com", "/shop/", []string{"train-ai"}, policy.LicenseNoMatch, "", ""},
		{"ai-all prohibits ai-input", 200, scopedLicense, "example.com", "/blog/1", []string{"search", "ai-input"}, policy.LicenseProhibited, `<content url="/blog/">`, "ai-input"},
		{"percent-encoding normalised", 200, `<rsl><content url="/a%7e/"><license><prohibits type="usage">search</prohibits></license></content></rsl>`, "example.com", "/a~/b", []string{"search"}, policy.LicenseProhibited, `<content url="/a%7e/">`, "search"},
		{"a pattern that starts with *", 200, `<rsl><content url="*.pdf$"><license><prohibits type="usage">search</prohibits></license></content></rsl>`, "example.com", "/a/b.pdf", []string{"search"}, policy.LicenseProhibited, `<content url="*.pdf$">`, "search"},
		{"missing license (404)", 404, "", "example.com", "/a", []string{"train-ai"}, policy.LicenseUnavailable, "", ""},
		{"server error", 500, "", "example.com", "/a", []string{"train-ai"}, policy.LicenseUnreadable, "", ""},
		{"oversized license", 200, "<rsl>" + strings.Repeat(" ", 2048) + "</rsl>", "example.com", "/a", []string{"search"}, policy.LicenseUnreadable, "", ""},
		{"malformed XML", 200, `<rsl><content url="/">`, "example.com", "/a", []string{"search"}, policy.LicenseUnreadable, "", ""},
		{"not RSL", 200, `<html><body/></html>`, "example.com", "/a", []string{"search"}, policy.LicenseUnreadable, "", ""},
		{"empty body", 200, "", "example.com", "/a", []string{"search"}, policy.LicenseUnreadable, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", policy.LicenseMediaType)
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			}))
			defer origin.Close()
			src := newSource(1024, nil)
			r := robots.Parse([]byte("User-agent: *\nAllow: /\nLicense: " + origin.URL + "/license.xml\n"))
			got := src.Check(context.Background(), r, tt.host, tt.path, tt.purposes)
			if got == nil {
				t.Fatal("no result")
			}
			if got.Decision != tt.want || got.Element != tt.element || got.Refused != tt.refused {
				t.Fatalf("got %s %q refused %q (err %v), want %s %q refused %q", got.Decision, got.Element, got.Refused, got.Err, tt.want, tt.element, tt.refused)
			}
			if got.URL != origin.URL+"/license.xml" || got.Line != 3 || got.FetchedAt.IsZero() {
				t.Errorf("evidence: %+v", got)
			}
			read := tt.status == 200 && len(tt.body) <= 1024
			if (got.SHA256 != [32]byte{}) != read {
				t.Errorf("SHA256 %x, want a body read %v", got.SHA256, read)
			}
			if got.Refuses() != (tt.want == policy.LicenseProhibited || tt.want == policy.LicenseRequired || tt.want == policy.LicenseUnreadable) {
				t.Errorf("Refuses() = %v for %s", got.Refuses(), got.Decision)
			}
			if tt.want == policy.LicenseUnreadable && got.Err == nil {
				t.Error("unreadable without an error")
			}
		})
	}
}

func newSource(max int, record func(policy.Access) policy.Access) *license.Source {
	f := access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})
	return license.NewSource(license.SourceOptions{Fetcher: f, MaxBytes: max, Record: record})
}

// TestCheckSkips checks that nothing is fetched when robots.txt names no
// license or no purpose is declared, and that the first absolute License
// line applies and the license is fetched once.
func TestCheckSkips(t *testing.T) {
	fetches := 0
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fetches++
		w.Write([]byte(siteLicense))
	}))
	defer origin.Close()
	var recorded []policy.Access
	src := newSource(0, func(a policy.Access) policy.Access {
		recorded = append(recorded, a)
		a.Raw = nil
		return a
	})
	ctx := context.Background()
	with := robots.Parse([]byte("License: /relative.xml\nLicense: " + origin.URL + "/l.xml\nLicense: " + origin.URL + "/other.xml\n"))
	without := robots.Parse([]byte("User-agent: *\nDisallow: /x\n"))
	if got := src.Check(ctx, without, "example.com", "/", []string{"search"}); got != nil {
		t.Errorf("no License line: %+v", got)
	}
	if got := src.Check(ctx, with, "example.com", "/", nil); got != nil {
		t.Errorf("no purpose: %+v", got)
	}
	if got := (*license.Source)(nil).Check(ctx, with, "example.com", "/", []string{"search"}); got != nil {
		t.Errorf("nil Source: %+v", got)
	}
	for range 3 {
		if got := src.Check(ctx, with, "example.com", "/", []string{"search"}); got == nil || got.Line != 2 || got.Decision != policy.LicensePermitted {
			t.Fatalf("got %+v", got)
		}
	}
	if fetches != 1 || len(recorded) != 1 || string(recorded[0].Raw) != siteLicense {
		t.Errorf("%d fetches, %d recorded", fetches, len(recorded))
	}
}

func TestPurposes(t *testing.T) {
	tests := map[string][]string{
		"all":      {"train-ai", "search", "ai-input"},
		"ai-all":   {"train-ai", "ai-input"},
		"AI-Train": {"train-ai"},
		"search":   {"search"},
		"ai-input": {"ai-input"},
		"ai-index": nil,
		"other":    nil,
	}
	for v, want := range tests {
		if got := license.Purposes(v); !reflect.DeepEqual(got, want) {
			t.Errorf("Purposes(%q) = %q, want %q", v, got, want)
		}
	}
}

// TestParseNeverPanics feeds hostile documents to Parse.
func TestParseNeverPanics(t *testing.T) {
	for _, body := range []string{"", "<", "<rsl", "<rsl><content url=\"\x00\"/></rsl>", "<!DOCTYPE rsl [<!ENTITY a \"b\">]><rsl>&a;</rsl>",
		"<rsl><content url=\"/\"><license><permits type=\"usage\">" + strings.Repeat("all,", 1000) + "</permits></license></content></rsl>"} {
		l, err := license.Parse([]byte(body))
		if (l == nil) == (err == nil) {
			t.Errorf("Parse(%.30q) = %v, %v", body, l, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(siteLicense))
	f.Add([]byte(scopedLicense))
	f.Add([]byte(`<rsl><content url="https://e.com/*$" server="x"><license><permits type="usage">all ai-index</permits></license></content></rsl>`))
	f.Fuzz(func(t *testing.T, body []byte) {
		l, err := license.Parse(body)
		if (l == nil) == (err == nil) {
			t.Fatalf("Parse = %v, %v", l, err)
		}
		if l != nil {
			d, c, refused := l.Decide("e.com", "/a/b", []string{"train-ai", "search", "ai-input"})
			if (c == nil) != (d == policy.LicenseNoMatch) || (refused != "") != (d == policy.LicenseProhibited) {
				t.Fatalf("Decide = %s, %v, %q", d, c, refused)
			}
		}
	})
}
