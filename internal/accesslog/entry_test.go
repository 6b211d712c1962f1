package accesslog

import (
	"strings"
	"testing"
	"time"
)

func TestCombinedParse(t *testing.T) {
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		name, line         string
		client, target, ua string
		status             int
		time               time.Time
		malformed          bool
	}{
		{"nginx combined", `203.0.113.7 - - [20/Nov/2026:10:00:00 +0000] "GET /a?b=1 HTTP/1.1" 200 512 "-" "ExampleBot/1.0"`,
			"203.0.113.7", "/a?b=1", "ExampleBot/1.0", 200, at, false},
		{"offset", `::1 - frank [20/Nov/2026:11:30:00 +0130] "GET / HTTP/1.0" 304 - "https://x/" "Mozilla/5.0 (compatible; Googlebot/2.1)"`,
			"::1", "/", "Mozilla/5.0 (compatible; Googlebot/2.1)", 304, at, false},
		{"apache escapes", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 1 "-" "Bot \"q\" \\ \x41"`,
			"1.2.3.4", "/x", `Bot "q" \ A`, 200, at, false},
		{"nginx hex escape", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 1 "-" "Bot\x22q"`,
			"1.2.3.4", "/x", `Bot"q`, 200, at, false},
		{"common log format", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 1`,
			"1.2.3.4", "/x", "", 200, at, false},
		{"absolute target", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET http://x.org/p HTTP/1.1" 200 1 "-" "-"`,
			"1.2.3.4", "http://x.org/p", "", 200, at, false},
		{"HTTP/0.9", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET /p" 200 1 "-" "B/1"`, "1.2.3.4", "/p", "B/1", 200, at, false},
		{"request line -", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "-" 400 0 "-" "-"`, "", "", "", 0, time.Time{}, true},
		{"binary request", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "\x16\x03\x01" 400 0 "-" "-"`, "", "", "", 0, time.Time{}, true},
		{"bad month", `1.2.3.4 - - [20/Nox/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`, "", "", "", 0, time.Time{}, true},
		{"bad hour", `1.2.3.4 - - [20/Nov/2026:1x:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "-"`, "", "", "", 0, time.Time{}, true},
		{"no time", `1.2.3.4 - - "GET / HTTP/1.1" 200 1 "-" "-"`, "", "", "", 0, time.Time{}, true},
		{"unterminated UA", `1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "abc`, "", "", "", 0, time.Time{}, true},
		{"empty", ``, "", "", "", 0, time.Time{}, true},
		{"garbage", `hello world`, "", "", "", 0, time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Entry
			err := (&Combined{}).Parse([]byte(tt.line), &e)
			if tt.malformed {
				if err == nil {
					t.Fatalf("parsed %q, want malformed", tt.line)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(e.Client) != tt.client || string(e.Target) != tt.target || string(e.UserAgent) != tt.ua || e.Status != tt.status || !e.Time.Equal(tt.time) {
				t.Errorf("got client %q target %q ua %q status %d time %v", e.Client, e.Target, e.UserAgent, e.Status, e.Time)
			}
		})
	}
}

func TestJSONParse(t *testing.T) {
	f, err := ParseJSONFields("client=ip,time=ts,user_agent=ua")
	if err != nil {
		t.Fatal(err)
	}
	p := NewJSONParser(f)
	tests := []struct {
		line, target, ua string
		ok               bool
	}{
		{`{"ip":"1.2.3.4","ts":"2026-11-20T10:00:00Z","request":"GET /a HTTP/1.1","status":200,"ua":"B/1"}`, "/a", "B/1", true},
		{`{"ip":"1.2.3.4","ts":1795168800.5,"request_method":"GET","request_uri":"/b","status":"404","ua":"-"}`, "/b", "", true},
		{`{"ip":"1.2.3.4","ts":"20/Nov/2026:10:00:00 +0000","request_uri":"/c"}`, "/c", "", true},
		{`{"ip":"1.2.3.4","ts":"yesterday","request_uri":"/c"}`, "", "", false},
		{`{"ts":"2026-11-20T10:00:00Z","request_uri":"/c"}`, "", "", false},
		{`{"ip":"1.2.3.4","ts":"2026-11-20T10:00:00Z","request_uri":"c"}`, "", "", false},
		{`not json`, "", "", false},
	}
	for _, tt := range tests {
		var e Entry
		err := p.Parse([]byte(tt.line), &e)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err %v, want ok %v", tt.line, err, tt.ok)
			continue
		}
		if tt.ok && (string(e.Target) != tt.target || string(e.UserAgent) != tt.ua) {
			t.Errorf("%s: target %q ua %q", tt.line, e.Target, e.UserAgent)
		}
	}
	if _, err := ParseJSONFields("agent=ua"); err == nil || !strings.Contains(err.Error(), "user_agent") {
		t.Errorf("unknown NAME: %v", err)
	}
}

func FuzzCombined(f *testing.F) {
	f.Add([]byte(`203.0.113.7 - - [20/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 512 "-" "ExampleBot/1.0 \"x\" \x41"`))
	f.Add([]byte(`1.2.3.4 - - [20/Nov/2026:10:00:00 +0000] "GET /x HTTP/1.1" 200 1`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var e Entry
		if err := (&Combined{}).Parse(line, &e); err == nil && (len(e.Client) == 0 || len(e.Target) == 0) {
			t.Errorf("parsed %q without a client or target", line)
		}
	})
}

func FuzzJSONParse(f *testing.F) {
	f.Add([]byte(`{"remote_addr":"1.2.3.4","time_iso8601":"2026-11-20T10:00:00+00:00","request":"GET /a HTTP/1.1","status":200,"http_user_agent":"B/1"}`))
	f.Add([]byte(`{"remote_addr":"::1","time_iso8601":1795168800.5,"request_uri":"/b"}`))
	p := NewJSONParser(DefaultJSONFields())
	f.Fuzz(func(t *testing.T, line []byte) {
		var e Entry
		if err := p.Parse(line, &e); err == nil && (len(e.Client) == 0 || len(e.Target) == 0) {
			t.Errorf("parsed %q without a client or target", line)
		}
	})
}
