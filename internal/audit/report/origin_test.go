package report

import (
	"reflect"
	"strings"
	"testing"
)

// Three origins on one address, and http and https of one host: each is
// a row of its own, an unreachable port says so on its own row, and the
// default port, case and userinfo do not make new rows. A CONNECT target
// is keyed as the proxy keys it (port 80: http, else https).
const originsLog = `{"time":"2026-11-22T10:00:00Z","url":"http://127.0.0.1:8001/a","decision":"allow","reason":"rule","product_token":"gptbot","access_result":"successful"}
{"time":"2026-11-22T10:00:01Z","url":"http://127.0.0.1:8002/a","decision":"allow","reason":"rule","product_token":"gptbot","access_result":"successful"}
{"time":"2026-11-22T10:00:02Z","url":"http://127.0.0.1:8003/a","decision":"deny","reason":"unreachable","product_token":"gptbot","access_result":"unreachable"}
{"time":"2026-11-22T10:00:03Z","url":"http://127.0.0.1:8003/b","decision":"deny","reason":"unreachable","product_token":"gptbot","access_result":"unreachable"}
{"time":"2026-11-22T10:00:04Z","url":"http://Example.COM:80/x","decision":"allow","reason":"rule","product_token":"gptbot"}
{"time":"2026-11-22T10:00:05Z","url":"https://user@example.com/x","decision":"allow","reason":"rule","product_token":"gptbot"}
{"time":"2026-11-22T10:00:06Z","url":"https://example.com:443/y","decision":"deny","reason":"rule","product_token":"gptbot","rule":"Disallow: /y","rule_line":2,"enforced":false}
{"time":"2026-11-22T10:00:07Z","url":"example.com:443","decision":"allow","reason":"intercept","product_token":"gptbot"}
{"time":"2026-11-22T10:00:08Z","url":"http://example.com/y","decision":"deny","reason":"rule","product_token":"gptbot","rule":"Disallow: /y","rule_line":2,"enforced":false}
`

func TestHostsKeyedByOrigin(t *testing.T) {
	p := writeFile(t, t.TempDir(), "audit.log", originsLog)
	rep, err := Collect([]string{p}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		origin, authority, host string
		requests                uint64
		atEnd                   bool
	}
	var got []row
	for _, h := range rep.Hosts.Rows {
		got = append(got, row{h.Origin, h.Authority, h.Host, h.Requests, h.UnreachableAtEnd})
	}
	want := []row{
		{"https://example.com", "example.com:443", "example.com", 3, false},
		{"http://127.0.0.1:8003", "127.0.0.1:8003", "127.0.0.1", 2, true},
		{"http://example.com", "example.com:80", "example.com", 2, false},
		{"http://127.0.0.1:8001", "127.0.0.1:8001", "127.0.0.1", 1, false},
		{"http://127.0.0.1:8002", "127.0.0.1:8002", "127.0.0.1", 1, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("host rows:\ngot  %+v\nwant %+v", got, want)
	}
	if rep.Summary.DistinctHosts != 5 || rep.Tokens.Rows[0].DistinctHosts != 5 {
		t.Errorf("distinct sites: summary %d, token %d; want 5", rep.Summary.DistinctHosts, rep.Tokens.Rows[0].DistinctHosts)
	}
	var vs []string
	for _, v := range rep.Violations.Rows {
		vs = append(vs, v.Origin+" "+v.Host)
	}
	if want := []string{"http://example.com example.com", "https://example.com example.com"}; !reflect.DeepEqual(vs, want) {
		t.Errorf("violations: got %q, want %q", vs, want)
	}
}

// -host takes an origin, an authority or a host name, as a user types it.
func TestHostFilterForms(t *testing.T) {
	p := writeFile(t, t.TempDir(), "audit.log", originsLog)
	for _, c := range []struct {
		host     string
		requests uint64
	}{
		{"127.0.0.1:8001", 1},
		{"127.0.0.1:8003", 2},
		{"http://127.0.0.1:8003", 2},
		{"https://127.0.0.1:8003", 0},
		{"127.0.0.1", 4},
		{"EXAMPLE.com", 5},
		{"example.com:443", 3},
		{"https://example.com", 3},
		{"https://example.com:443/", 3},
		{"http://example.com", 2},
		{"example.com:80", 2},
	} {
		rep, err := Collect([]string{p}, Options{Host: c.host})
		if err != nil {
			t.Fatalf("-host %s: %v", c.host, err)
		}
		if rep.Summary.Requests != c.requests || rep.Summary.Filtered != 9-c.requests {
			t.Errorf("-host %s: got %d requests, %d left out; want %d", c.host, rep.Summary.Requests, rep.Summary.Filtered, c.requests)
		}
		if msg := rep.NoMatch(); (msg == "") != (c.requests > 0) {
			t.Errorf("-host %s: NoMatch %q", c.host, msg)
		}
	}
	for _, bad := range []string{"ftp://example.com", "exa mple.com", "example.com:99999"} {
		if _, err := Collect([]string{p}, Options{Host: bad}); err == nil || !strings.Contains(err.Error(), "-host") {
			t.Errorf("-host %q: got error %v, want one naming -host", bad, err)
		}
	}
}

func TestNoMatchNamesSites(t *testing.T) {
	p := writeFile(t, t.TempDir(), "audit.log", originsLog)
	rep, err := Collect([]string{p}, Options{Host: "127.0.0.1:9999"})
	if err != nil {
		t.Fatal(err)
	}
	want := "no line matches the filters (host 127.0.0.1:9999): 9 lines left out; sites in the log include http://127.0.0.1:8001, http://127.0.0.1:8002, http://127.0.0.1:8003, http://example.com, https://example.com"
	if got := rep.NoMatch(); got != want {
		t.Errorf("NoMatch:\ngot  %q\nwant %q", got, want)
	}
}
