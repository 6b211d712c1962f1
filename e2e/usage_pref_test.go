package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"
)

// prefOrigin serves a robots.txt with usage preferences.
type prefOrigin struct {
	contentUsage, contentSignal string // the lines' values, "" for none
	srv                         *httptest.Server
}

func newPrefOrigin(t *testing.T, contentUsage, contentSignal, header string) *prefOrigin {
	o := &prefOrigin{contentUsage: contentUsage, contentSignal: contentSignal}
	robots := "User-agent: *\nAllow: /\n"
	if contentUsage != "" {
		robots += "Content-Usage: " + contentUsage + "\n"
	}
	if contentSignal != "" {
		robots += "Content-Signal: " + contentSignal + "\n"
	}
	o.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, robots)
			return
		}
		if header != "" {
			w.Header().Set("Content-Usage", header)
		}
		_, _ = io.WriteString(w, "origin:"+r.RequestURI)
	}))
	t.Cleanup(o.srv.Close)
	return o
}

// prefBots are the crawlers of the table and the purpose declared for each
// (usage.purposes).
var prefBots = []struct{ token, purpose string }{
	{"TrainBot", "train-ai"}, {"SearchBot", "search"}, {"InputBot", "ai-input"}, {"PlainBot", ""},
}

const prefConfig = `usage:
  enforce: true
  purposes:
    TrainBot: [train-ai]
    SearchBot: [search]
    InputBot: [ai-input]
`

// refuses is the table's expectation, written from the drafts rather than
// from the code: Content-Usage "n" for the purpose's vocab label, or
// Content-Signal "no" for its signal, refuses it; the more restrictive of
// the two wins.
func refuses(o *prefOrigin, purpose string) bool {
	signal := map[string]string{"train-ai": "ai-train", "search": "search", "ai-input": "ai-input"}[purpose]
	cu := purpose != "ai-input" && strings.Contains(o.contentUsage, purpose+"=n")
	cs := strings.Contains(o.contentSignal, signal+"=no")
	return purpose != "" && (cu || cs)
}

func TestUsagePreferenceTable(t *testing.T) {
	var origins []*prefOrigin
	for _, cu := range []string{"", "train-ai=n", "train-ai=y, search=n"} {
		for _, cs := range []string{"", "search=yes, ai-train=yes, ai-input=yes", "search=yes, ai-train=no, ai-input=no"} {
			origins = append(origins, newPrefOrigin(t, cu, cs, ""))
		}
	}
	for _, mode := range []string{"enforce", "report"} {
		t.Run(mode, func(t *testing.T) {
			p := startProxy(t, "mode: "+mode+"\n"+prefConfig)
			proxyURL, _ := url.Parse("http://" + p.proxyAddr)
			client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
			var table strings.Builder
			table.WriteString("| declared purpose | Content-Usage | Content-Signal | status |\n|---|---|---|---|\n")
			n := 0
			type row struct {
				url     string
				refused bool
			}
			var rows []row
			for _, o := range origins {
				for _, b := range prefBots {
					u := fmt.Sprintf("%s/doc/%s", o.srv.URL, b.token)
					req, _ := http.NewRequest(http.MethodGet, u, nil)
					req.Header.Set("User-Agent", b.token+"/1.0")
					resp, err := client.Do(req)
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					n++
					refused := refuses(o, b.purpose)
					want := http.StatusOK
					if refused && mode == "enforce" {
						want = http.StatusForbidden
					}
					if resp.StatusCode != want {
						t.Errorf("%s declared %q, Content-Usage %q, Content-Signal %q: status %d, want %d",
							b.token, b.purpose, o.contentUsage, o.contentSignal, resp.StatusCode, want)
					}
					if want == http.StatusForbidden && (resp.Header.Get("X-Robotsproxy-Reason") != "usage-preference" ||
						!strings.HasPrefix(resp.Header.Get("X-Robotsproxy-Rule"), "line ")) {
						t.Errorf("%s at %s: reason %q, rule %q; want usage-preference and the deciding line", b.token, u,
							resp.Header.Get("X-Robotsproxy-Reason"), resp.Header.Get("X-Robotsproxy-Rule"))
					}
					rows = append(rows, row{u, refused})
					fmt.Fprintf(&table, "| %s | %s | %s | %d |\n", orDash(b.purpose), orDash(o.contentUsage), orDash(o.contentSignal), resp.StatusCode)
				}
			}
			lines := p.auditLines(t, n)
			byURL := map[string]map[string]any{}
			for _, l := range lines {
				byURL[l["url"].(string)] = l
			}
			for _, r := range rows {
				l := byURL[r.url]
				wantDecision, wantReason := "allow", "rule"
				if r.refused {
					wantDecision, wantReason = "deny", "usage-preference"
				}
				if l["decision"] != wantDecision || l["reason"] != wantReason || l["enforced"] != (mode == "enforce" || !r.refused) {
					t.Errorf("audit line of %s: decision %v, reason %v, enforced %v; want %s, %s, %v",
						r.url, l["decision"], l["reason"], l["enforced"], wantDecision, wantReason, mode == "enforce" || !r.refused)
				}
			}
			t.Logf("mode %s:\n%s", mode, table.String())
		})
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// TestUsagePreferenceAudit checks the usage fields of the audit line: the
// preferences with their lines, per path, and the response's Content-Usage
// header field, which is logged but denies nothing.
func TestUsagePreferenceAudit(t *testing.T) {
	perPath := newPrefOrigin(t, "train-ai=n\nContent-Usage: /open/ train-ai=y", "search=yes", "")
	header := newPrefOrigin(t, "", "", "train-ai=n, search=y")
	p := startProxy(t, prefConfig)
	proxyURL, _ := url.Parse("http://" + p.proxyAddr)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	cases := []struct {
		url    string
		status int
		usage  map[string]any
		lines  []any
	}{
		{perPath.srv.URL + "/doc", 403, map[string]any{"train-ai": "n", "search": "y"},
			[]any{"line 3: Content-Usage: train-ai=n", "line 5: Content-Signal: search=yes"}},
		{perPath.srv.URL + "/open/doc", 200, map[string]any{"train-ai": "y", "search": "y"},
			[]any{"line 4: Content-Usage: /open/ train-ai=y", "line 5: Content-Signal: search=yes"}},
		{header.srv.URL + "/doc", 200, map[string]any{"train-ai": "n", "search": "y"},
			[]any{"header: Content-Usage: train-ai=n, search=y"}},
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, c.url, nil)
		req.Header.Set("User-Agent", "TrainBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.url, resp.StatusCode, c.status)
		}
	}
	lines := p.auditLines(t, len(cases))
	for i, c := range cases {
		l := lines[i]
		if l["url"] != c.url || !reflect.DeepEqual(l["usage"], c.usage) || !reflect.DeepEqual(l["usage_lines"], c.lines) ||
			!reflect.DeepEqual(l["purposes"], []any{"train-ai"}) {
			t.Errorf("audit line %d: url %v usage %v usage_lines %v purposes %v; want %s %v %v [train-ai]",
				i, l["url"], l["usage"], l["usage_lines"], l["purposes"], c.url, c.usage, c.lines)
		}
	}
}

// TestRangePurposesFollowThePin: the purposes of a client range are those
// of the pin it makes, whatever form the range is written in: an
// IPv4-mapped IPv6 range (::ffff:127.0.0.0/104) pins IPv4 clients and
// declares its purposes for them.
func TestRangePurposesFollowThePin(t *testing.T) {
	o := newPrefOrigin(t, "train-ai=n", "", "")
	for _, cidr := range []string{"127.0.0.0/8", "::ffff:127.0.0.0/104"} {
		t.Run(cidr, func(t *testing.T) {
			p := startProxy(t, "usage:\n  enforce: true\nidentity:\n  client_ranges:\n    - {cidr: \""+cidr+"\", token: RangeBot, purposes: [train-ai]}\n")
			defer p.stop(t)
			tr := &http.Transport{Proxy: http.ProxyURL(p.proxyURL("", ""))}
			defer tr.CloseIdleConnections()
			req, _ := http.NewRequest(http.MethodGet, o.srv.URL+"/page", nil)
			req.Header.Set("User-Agent", "Mozilla/5.0")
			resp, err := (&http.Client{Transport: tr}).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("X-Robotsproxy-Reason") != "usage-preference" {
				t.Errorf("range %s declaring train-ai at a train-ai=n site: got status %d reason %q, want 403 usage-preference",
					cidr, resp.StatusCode, resp.Header.Get("X-Robotsproxy-Reason"))
			}
			l := p.auditSince(t, 0, 1)[0]
			if l["product_token"] != "RangeBot" || !reflect.DeepEqual(l["purposes"], []any{"train-ai"}) {
				t.Errorf("audit line: product_token %v purposes %v; want RangeBot [train-ai]", l["product_token"], l["purposes"])
			}
		})
	}
}
