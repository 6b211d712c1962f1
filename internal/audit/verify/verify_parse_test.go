package verify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

func TestParseLine(t *testing.T) {
	deep := `{"x":` + strings.Repeat("[", auditlog.MaxDepth) + strings.Repeat("]", auditlog.MaxDepth) + `}`
	for _, tt := range []struct {
		name, in string
		want     string // fmt of the fields read
		err      error
	}{
		{"audit line", `{"time":"2026-11-22T20:10:50Z","method":"GET","url":"http://a.example/p?q=1","decision":"deny","reason":"rule","candidates":["ExampleBot","Helper"],"robots_url":"http://a.example/robots.txt","group":"examplebot","star_fallback":false,"rule":"Disallow: /p","rule_line":2,"access_result":"successful","robots_status":200,"robots_sha256":"ab","robots_fetched_at":"2026-11-22T20:10:50.5Z","status":403,"bytes":-1,"duration_ms":0.25,"prev":"00"}`,
			`GET http://a.example/p?q=1 deny rule [ExampleBot Helper] examplebot false "Disallow: /p" 2 successful 200 ab 2026-11-22T20:10:50.5Z`, nil},
		{"escapes", `{"url":"http://a/\u0041\"b\\","rule":"Disallow: /\t","method":"GET"}`, `GET http://a/A"b\   [] - false "Disallow: /\t" 0  - - -`, nil},
		{"skipped values of every kind", `{"x":{"a":[1,{"b":"}]"}],"c":null},"y":[],"z":{},"w":-1.5e3,"v":true,"decision":"allow" , "reason" : "no-matching-rule" }`,
			` - allow no-matching-rule [] - false "" 0  - - -`, nil},
		// A request politeness held: its reason is the wait's cause, and
		// robots_reason the robots.txt decision that is re-decided.
		{"politeness wait", `{"decision":"allow","reason":"crawl-delay","robots_reason":"no-matching-rule"}`,
			` - allow crawl-delay [] - false "" 0  - - -`, nil},
		{"nulls", `{"decision":null,"candidates":null,"rule_line":null,"star_fallback":null,"robots_status":null}`, ` -   [] - false "" 0  - - -`, nil},
		{"last key wins", `{"decision":"allow","decision":"deny"}`, ` - deny  [] - false "" 0  - - -`, nil},
		{"empty object", `{}`, ` -   [] - false "" 0  - - -`, nil},
		{"truncated", `{"decision":"al`, "", auditlog.ErrTruncated},
		{"truncated after a value", `{"decision":"allow"`, "", auditlog.ErrTruncated},
		{"not an object", `[1,2]`, "", auditlog.ErrSyntax},
		{"trailing octets", `{} x`, "", auditlog.ErrSyntax},
		{"wrong type", `{"decision":5}`, "", auditlog.ErrType},
		{"wrong type in candidates", `{"candidates":[1]}`, "", auditlog.ErrType},
		{"number with a fraction", `{"rule_line":1.5}`, "", auditlog.ErrType},
		{"control octet in a string", "{\"url\":\"a\x01\"}", "", auditlog.ErrSyntax},
		{"missing colon", `{"url" "a"}`, "", auditlog.ErrSyntax},
		{"too deep", deep, "", auditlog.ErrTooDeep},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l auditLine
			err := parseLine([]byte(tt.in), &l, newInterner())
			if !errors.Is(err, tt.err) {
				t.Fatalf("parseLine(%s): got error %v, want %v", tt.in, err, tt.err)
			}
			if err == nil {
				if got := fields(&l); got != tt.want {
					t.Errorf("parseLine(%s):\ngot  %s\nwant %s", tt.in, got, tt.want)
				}
			}
		})
	}
}

func fields(l *auditLine) string {
	status := "-"
	if l.RobotsStatus != nil {
		status = fmt.Sprint(*l.RobotsStatus)
	}
	url := l.URL
	if url == "" {
		url = "-"
	}
	group := l.Group
	if group == "" {
		group = "-"
	}
	sha, at := l.RobotsSHA256, l.RobotsFetchedAt
	if sha == "" {
		sha = "-"
	}
	if at == "" {
		at = "-"
	}
	return fmt.Sprintf("%s %s %s %s %v %s %v %q %d %s %s %s %s", l.Method, url, l.Decision, l.Reason, l.Candidates,
		group, l.StarFallback, l.Rule, l.RuleLine, l.Access, status, sha, at)
}

// FuzzParseLine: parseLine never panics, and never rejects valid JSON as
// malformed; when it accepts a line that encoding/json also reads, both
// read the same strings.
func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"method":"GET","url":"http://a.example/p","decision":"deny","reason":"rule","candidates":["A"],"rule":"Disallow: /p","rule_line":2,"prev":"00"}`))
	f.Add([]byte(`{"x":{"a":[1,{"b":"}]"}],"c":null},"decision":"allow"}`))
	f.Add([]byte(`{"url":"\u0041\ud800","rule_line":-0}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var l auditLine
		err := parseLine(b, &l, newInterner())
		if err != nil {
			object := bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte("{"))
			if json.Valid(b) && object && !errors.Is(err, auditlog.ErrType) && !errors.Is(err, auditlog.ErrTooDeep) {
				t.Fatalf("parseLine(%q): %v, but it is a valid JSON object", b, err)
			}
			return
		}
		// encoding/json folds the case of keys, and replaces invalid
		// UTF-8: compare on plain lower-case ASCII only.
		for _, c := range b {
			if c >= 'A' && c <= 'Z' || c >= 0x80 {
				return
			}
		}
		var ref struct{ Method, URL, Decision, Reason, Rule string }
		if json.Unmarshal(b, &ref) != nil {
			return
		}
		if got := (struct{ Method, URL, Decision, Reason, Rule string }{l.Method, l.URL, l.Decision, l.Reason, l.Rule}); got != ref {
			t.Fatalf("parseLine(%q): got %+v, encoding/json reads %+v", b, got, ref)
		}
	})
}
