package report

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

const fullLine = `{"time":"2026-11-22T20:10:50Z","client":"10.0.0.1:5555","method":"GET","url":"https://Example.com:8080/private/x?q=1","user_agent":"Mozilla/5.0 (compatible; GPTBot/1.2)","decision":"deny","reason":"rule","product_token":"gptbot","token_source":"credentials","candidates":["gptbot","mozilla"],"robots_url":"https://example.com:8080/robots.txt","user":"u1","group":"gptbot","star_fallback":false,"rule":"Disallow: /private","rule_line":7,"access_result":"successful","robots_status":200,"cache":"hit","status":200,"bytes":-1,"duration_ms":1.25,"enforced":false,"robots_sha256":"ab12","robots_fetched_at":"2026-11-22T20:00:00Z","prev":"00ff"}`

func TestParseRecordFields(t *testing.T) {
	var r record
	if err := parseRecord([]byte(fullLine), &r); err != nil {
		t.Fatalf("parseRecord: %v", err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"url", string(r.URL), "https://Example.com:8080/private/x?q=1"},
		{"decision", string(r.Decision), "deny"},
		{"reason", string(r.Reason), "rule"},
		{"token", string(r.Token), "gptbot"},
		{"source", string(r.TokenSource), "credentials"},
		{"robots_url", string(r.RobotsURL), "https://example.com:8080/robots.txt"},
		{"rule", string(r.Rule), "Disallow: /private"},
		{"access", string(r.Access), "successful"},
		{"sha", string(r.RobotsSHA256), "ab12"},
	} {
		if c.got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, c.got, c.want)
		}
	}
	if r.Time != 1795378250 || r.RuleLine != 7 || r.Enforced || r.Cut {
		t.Errorf("got ts %d rule_line %d enforced %v cut %v, want 1795378250 7 false false", r.Time, r.RuleLine, r.Enforced, r.Cut)
	}
}

func TestParseRecordCases(t *testing.T) {
	for _, c := range []struct {
		name, line string
		err        error
		check      func(r *record) bool
	}{
		{"older format: no enforced means enforced", `{"time":"2026-11-22T20:10:50Z","decision":"deny"}`, nil, func(r *record) bool { return r.Enforced }},
		{"robots_reason", `{"time":"2026-11-22T20:10:50Z","decision":"deny","reason":"backoff","robots_reason":"rule"}`, nil, func(r *record) bool {
			return string(r.Reason) == "backoff" && string(r.RobotsTxtReason()) == "rule"
		}},
		{"no robots_reason: reason is robots.txt's", `{"time":"2026-11-22T20:10:50Z","decision":"deny","reason":"rule"}`, nil, func(r *record) bool { return string(r.RobotsTxtReason()) == "rule" }},
		{"enforced true", `{"time":"2026-11-22T20:10:50Z","decision":"deny","enforced":true}`, nil, func(r *record) bool { return r.Enforced }},
		{"escapes", `{"time":"2026-11-22T20:10:50Z","decision":"deny","rule":"Disallow: /a\"b\\c\u00e9"}`, nil, func(r *record) bool { return string(r.Rule) == "Disallow: /a\"b\\cé" }},
		{"escaped key", `{"time":"2026-11-22T20:10:50Z","\u0064ecision":"allow"}`, nil, func(r *record) bool { return string(r.Decision) == "allow" }},
		{"null fields", `{"time":"2026-11-22T20:10:50Z","decision":"allow","rule":null,"rule_line":null,"enforced":null}`, nil, func(r *record) bool { return r.Rule == nil && r.Enforced }},
		{"duplicate key: last wins", `{"time":"2026-11-22T20:10:50Z","decision":"allow","decision":"deny"}`, nil, func(r *record) bool { return string(r.Decision) == "deny" }},
		{"offset time", `{"time":"2026-11-22T21:10:50+01:00","decision":"allow"}`, nil, func(r *record) bool { return r.Time == 1795378250 }},
		{"fractional time", `{"time":"2026-11-22T20:10:50.999Z","decision":"allow"}`, nil, func(r *record) bool { return r.Time == 1795378250 }},
		{"cut field", `{"time":"2026-11-22T20:10:50Z","decision":"allow","url":"https://a/","url_truncated":true,"url_length":90000}`, nil, func(r *record) bool { return r.Cut }},
		{"nested skipped values", `{"x":{"a":[1,{"b":"}"}],"c":null},"time":"2026-11-22T20:10:50Z","decision":"allow"}`, nil, nil},
		{"whitespace", " {\t\"time\" : \"2026-11-22T20:10:50Z\" , \"decision\" : \"allow\" } ", nil, nil},
		{"not JSON", `hello world`, auditlog.ErrSyntax, nil},
		{"array", `[1,2]`, auditlog.ErrSyntax, nil},
		{"missing colon", `{"time" "x"}`, auditlog.ErrSyntax, nil},
		{"trailing garbage", `{"time":"2026-11-22T20:10:50Z","decision":"allow"} x`, auditlog.ErrSyntax, nil},
		{"two objects", `{"decision":"allow"}{"decision":"deny"}`, auditlog.ErrSyntax, nil},
		{"no decision (an application log line)", `{"level":"info","time":"2026-11-22T20:10:50Z","message":"listening"}`, errNoDecision, nil},
		{"no time", `{"decision":"allow"}`, errNoTime, nil},
		{"empty object", `{}`, errNoTime, nil},
		{"bad time", `{"time":"yesterday","decision":"allow"}`, auditlog.ErrBadTime, nil},
		{"impossible date", `{"time":"2026-02-30T00:00:00Z","decision":"allow"}`, auditlog.ErrBadTime, nil},
		{"decision not a string", `{"time":"2026-11-22T20:10:50Z","decision":1}`, auditlog.ErrType, nil},
		{"robots_reason not a string", `{"time":"2026-11-22T20:10:50Z","decision":"deny","robots_reason":1}`, auditlog.ErrType, nil},
		{"enforced not a bool", `{"time":"2026-11-22T20:10:50Z","decision":"deny","enforced":"no"}`, auditlog.ErrType, nil},
		{"rule_line not an integer", `{"time":"2026-11-22T20:10:50Z","decision":"deny","rule_line":1.5}`, auditlog.ErrType, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var r record
			err := parseRecord([]byte(c.line), &r)
			if !errors.Is(err, c.err) {
				t.Fatalf("parseRecord(%s): got error %v, want %v", c.line, err, c.err)
			}
			if c.check != nil && !c.check(&r) {
				t.Errorf("parseRecord(%s): got %+v", c.line, r)
			}
		})
	}
}

// Every strict prefix of a line is a truncated line, whatever the cut.
func TestParseRecordTruncatedAnywhere(t *testing.T) {
	var r record
	for n := 1; n < len(fullLine); n++ {
		if err := parseRecord([]byte(fullLine[:n]), &r); !errors.Is(err, auditlog.ErrTruncated) {
			t.Fatalf("prefix %q: got %v, want %v", fullLine[:n], err, auditlog.ErrTruncated)
		}
	}
}

func TestParseRFC3339Fast(t *testing.T) {
	for _, s := range []string{"1970-01-01T00:00:00Z", "2000-02-29T23:59:59Z", "2026-11-22T20:10:50Z", "2100-03-01T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"} {
		got, ok := auditlog.ParseTime([]byte(s))
		ref, err := time.Parse(time.RFC3339, s)
		if !ok || err != nil || got != ref.Unix() {
			t.Errorf("auditlog.ParseTime(%s): got %d %v, want %d", s, got, ok, ref.Unix())
		}
	}
}

// FuzzParseRecord checks parseRecord against encoding/json: on every
// valid JSON object it must read the same fields (or report the same
// wrong type), and it must never panic on anything.
func FuzzParseRecord(f *testing.F) {
	f.Add(fullLine)
	f.Add(`{"time":"2026-11-22T20:10:50Z","decision":"allow","enforced":true,"x":[{"y":"\u00e9"}]}`)
	f.Add(`{"time":"2026-11-22T20:10:50Z","decision":"deny","rule_line":-3,"url":"a\"b"}`)
	f.Fuzz(func(t *testing.T, line string) {
		var r record
		err := parseRecord([]byte(line), &r)
		var obj map[string]json.RawMessage
		if !json.Valid([]byte(line)) || json.Unmarshal([]byte(line), &obj) != nil || obj == nil || !utf8.ValidString(line) {
			return
		}
		want, werr := refRecord(obj)
		if werr != nil {
			if err == nil {
				t.Fatalf("%s: got no error, want %v", line, werr)
			}
			return
		}
		if err != nil {
			t.Fatalf("%s: got %v, want no error", line, err)
		}
		got := refView{ts: r.Time, url: string(r.URL), decision: string(r.Decision), reason: string(r.Reason), token: string(r.Token),
			source: string(r.TokenSource), robotsURL: string(r.RobotsURL), rule: string(r.Rule), access: string(r.Access),
			sha: string(r.RobotsSHA256), robotsReason: string(r.RobotsReason), ruleLine: r.RuleLine, enforced: r.Enforced}
		if got != want {
			t.Fatalf("%s:\ngot  %+v\nwant %+v", line, got, want)
		}
	})
}
