package report

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// sampleLog is a small hand-written log: 13 lines, 10 of them requests.
// Host b.example is unreachable from 10:03 to 10:05 (one spell, 120 s);
// c.example from 10:30 to the end. Line 9 is in the older format (no
// enforced field). Lines 11 to 13 are not audit lines.
const sampleLog = `{"time":"2026-11-22T10:00:00Z","method":"GET","url":"https://a.example/x","decision":"allow","reason":"no-matching-rule","product_token":"googlebot","token_source":"user-agent","robots_url":"https://a.example/robots.txt","access_result":"successful","enforced":true,"robots_sha256":"aaa1"}
{"time":"2026-11-22T10:00:10Z","method":"GET","url":"https://a.example/private/1","decision":"deny","reason":"rule","product_token":"googlebot","token_source":"user-agent","robots_url":"https://a.example/robots.txt","rule":"Disallow: /private","rule_line":3,"access_result":"successful","enforced":true,"robots_sha256":"aaa1"}
{"time":"2026-11-22T10:01:00Z","method":"GET","url":"https://B.example/p","decision":"deny","reason":"rule","product_token":"gptbot","token_source":"credentials","robots_url":"https://b.example/robots.txt","rule":"Disallow: /p","rule_line":2,"access_result":"successful","enforced":false,"robots_sha256":"bbb1"}
{"time":"2026-11-22T10:02:00Z","method":"GET","url":"https://b.example/p","decision":"deny","reason":"rule","product_token":"gptbot","token_source":"credentials","robots_url":"https://b.example/robots.txt","rule":"Disallow: /p","rule_line":2,"access_result":"successful","enforced":false,"robots_sha256":"bbb1"}
{"time":"2026-11-22T10:03:00Z","method":"GET","url":"https://b.example/q","decision":"deny","reason":"unreachable","product_token":"gptbot","token_source":"credentials","robots_url":"https://b.example/robots.txt","access_result":"unreachable","enforced":false}
{"time":"2026-11-22T10:05:00Z","method":"GET","url":"https://b.example/q","decision":"deny","reason":"unreachable","product_token":"gptbot","token_source":"credentials","robots_url":"https://b.example/robots.txt","access_result":"unreachable","enforced":false}
{"time":"2026-11-22T10:10:00Z","method":"GET","url":"https://b.example/r","decision":"allow","reason":"no-matching-rule","product_token":"gptbot","token_source":"credentials","robots_url":"https://b.example/robots.txt","access_result":"successful","enforced":true,"robots_sha256":"bbb2"}
{"time":"2026-11-22T10:20:00Z","method":"CONNECT","url":"c.example:443","decision":"deny","reason":"host-denied","product_token":"ccbot","token_source":"user-agent","robots_url":"https://c.example/robots.txt","enforced":true}
{"time":"2026-11-22T10:30:00Z","method":"GET","url":"https://c.example/","decision":"deny","reason":"unreachable","product_token":"ccbot","token_source":"user-agent","robots_url":"https://c.example/robots.txt","access_result":"unreachable"}
{"time":"2026-11-22T10:40:00Z","method":"GET","url":"http://d.example/","decision":"none","reason":"not-proxied","status":502}
this is not JSON
{"time":"2026-11-22T10:50:00Z","decision":"al
{"level":"info","time":"2026-11-22T10:00:00Z","message":"listening"}
`

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func collectSample(t *testing.T, o Options) (*Report, string) {
	t.Helper()
	p := writeFile(t, t.TempDir(), "audit.log", sampleLog)
	rep, err := Collect([]string{p}, o)
	if err != nil {
		t.Fatalf("Collect: %v", err)
	}
	return rep, p
}

func TestSummary(t *testing.T) {
	rep, p := collectSample(t, Options{})
	s := rep.Summary
	if s.First == nil || !s.First.Equal(at("2026-11-22T10:00:00Z")) || !s.Last.Equal(at("2026-11-22T10:40:00Z")) || s.DurationSeconds != 2400 {
		t.Errorf("span: got %v to %v (%d s), want 10:00 to 10:40 (2400 s)", s.First, s.Last, s.DurationSeconds)
	}
	if s.Lines != 13 || s.Requests != 10 || s.Skipped != 3 || s.FirstSkipped != p+":11" || s.Filtered != 0 {
		t.Errorf("got lines %d requests %d skipped %d first %q filtered %d, want 13 10 3 %s:11 0", s.Lines, s.Requests, s.Skipped, s.FirstSkipped, s.Filtered, p)
	}
	wantWhy := map[string]uint64{"not a JSON object": 1, "truncated line": 1, "no decision field": 1}
	if !reflect.DeepEqual(s.SkippedBy, wantWhy) {
		t.Errorf("skipped by: got %v, want %v", s.SkippedBy, wantWhy)
	}
	if s.DistinctHosts != 4 || !s.DistinctHostsExact {
		t.Errorf("distinct hosts: got %d exact %v, want 4 exact", s.DistinctHosts, s.DistinctHostsExact)
	}
	for _, c := range []struct {
		name      string
		got, want []Count
	}{
		{"decisions", s.Decisions, []Count{{"deny", 7, 3, 4}, {"allow", 2, 2, 0}, {"none", 1, 1, 0}}},
		{"reasons", s.Reasons, []Count{{"rule", 3, 1, 2}, {"unreachable", 3, 1, 2}, {"no-matching-rule", 2, 2, 0}, {"host-denied", 1, 1, 0}, {"not-proxied", 1, 1, 0}}},
		{"access results", s.AccessResults, []Count{{"successful", 5, 3, 2}, {"unreachable", 3, 1, 2}}},
		{"token sources", s.TokenSources, []Count{{"credentials", 5, 1, 4}, {"user-agent", 4, 4, 0}}},
	} {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

func TestTokens(t *testing.T) {
	rep, _ := collectSample(t, Options{})
	want := []TokenRow{
		{Token: "gptbot", Requests: 5, Allowed: 1, WouldDeny: 4, DistinctHosts: 1, DistinctHostsExact: true, Source: "credentials", Sources: map[string]uint64{"credentials": 5}},
		{Token: "ccbot", Requests: 2, DeniedUnreachable: 1, OtherRefusals: 1, DistinctHosts: 1, DistinctHostsExact: true, Source: "user-agent", Sources: map[string]uint64{"user-agent": 2}},
		{Token: "googlebot", Requests: 2, Allowed: 1, DeniedByRule: 1, DistinctHosts: 1, DistinctHostsExact: true, Source: "user-agent", Sources: map[string]uint64{"user-agent": 2}},
		{Token: "(none)", Requests: 1, NotDecided: 1, DistinctHosts: 1, DistinctHostsExact: true, Sources: map[string]uint64{}},
	}
	if !reflect.DeepEqual(rep.Tokens.Rows, want) {
		t.Errorf("tokens:\ngot  %+v\nwant %+v", rep.Tokens.Rows, want)
	}
	if rep.Tokens.Distinct != 4 || rep.Tokens.MoreNotShown != 0 || rep.Tokens.BoundHit {
		t.Errorf("tokens section: got %+v", rep.Tokens)
	}
}

func TestViolations(t *testing.T) {
	rep, _ := collectSample(t, Options{})
	want := []ViolationRow{
		{Token: "gptbot", Host: "b.example", Origin: "https://b.example", RobotsURL: "https://b.example/robots.txt", Rule: "", RuleLine: 0, Reason: "unreachable",
			Count: 2, FirstSeen: at("2026-11-22T10:03:00Z"), LastSeen: at("2026-11-22T10:05:00Z")},
		{Token: "gptbot", Host: "b.example", Origin: "https://b.example", RobotsURL: "https://b.example/robots.txt", Rule: "Disallow: /p", RuleLine: 2, RobotsSHA256: "bbb1", Reason: "rule",
			Count: 2, FirstSeen: at("2026-11-22T10:01:00Z"), LastSeen: at("2026-11-22T10:02:00Z")},
	}
	if !reflect.DeepEqual(rep.Violations.Rows, want) {
		t.Errorf("violations:\ngot  %+v\nwant %+v", rep.Violations.Rows, want)
	}
}

func TestHosts(t *testing.T) {
	rep, _ := collectSample(t, Options{})
	want := []HostRow{
		{Origin: "https://b.example", Authority: "b.example:443", Host: "b.example", Requests: 5, WouldDeny: 4, Successful: 3, Unreachable: 2, UnreachableSpells: 1, UnreachableSeconds: 120, RobotsVersions: 2, LastRobotsSHA256: "bbb2"},
		{Origin: "https://a.example", Authority: "a.example:443", Host: "a.example", Requests: 2, Denied: 1, Successful: 2, RobotsVersions: 1, LastRobotsSHA256: "aaa1"},
		{Origin: "https://c.example", Authority: "c.example:443", Host: "c.example", Requests: 2, Denied: 2, Unreachable: 1, UnreachableSpells: 1, UnreachableAtEnd: true},
		{Origin: "http://d.example", Authority: "d.example:80", Host: "d.example", Requests: 1},
	}
	if !reflect.DeepEqual(rep.Hosts.Rows, want) {
		t.Errorf("hosts:\ngot  %+v\nwant %+v", rep.Hosts.Rows, want)
	}
}

func TestRulesAndURLs(t *testing.T) {
	rep, _ := collectSample(t, Options{})
	wantRules := []RuleRow{
		{RobotsURL: "https://b.example/robots.txt", Rule: "Disallow: /p", RuleLine: 2, Requests: 2, WouldDeny: 2},
		{RobotsURL: "https://a.example/robots.txt", Rule: "Disallow: /private", RuleLine: 3, Requests: 1, Denied: 1},
	}
	if !reflect.DeepEqual(rep.Rules.Rows, wantRules) {
		t.Errorf("rules:\ngot  %+v\nwant %+v", rep.Rules.Rows, wantRules)
	}
	wantURLs := []URLRow{
		{URL: "https://b.example/q", Denials: 2, WouldDeny: 2},
		{URL: "c.example:443", Denials: 1, Denied: 1},
		{URL: "https://B.example/p", Denials: 1, WouldDeny: 1},
		{URL: "https://a.example/private/1", Denials: 1, Denied: 1},
		{URL: "https://b.example/p", Denials: 1, WouldDeny: 1},
		{URL: "https://c.example/", Denials: 1, Denied: 1},
	}
	if !reflect.DeepEqual(rep.DeniedURLs.Rows, wantURLs) {
		t.Errorf("denied URLs:\ngot  %+v\nwant %+v", rep.DeniedURLs.Rows, wantURLs)
	}
}

func TestTimelines(t *testing.T) {
	rep, _ := collectSample(t, Options{})
	tl := rep.Timelines
	// 40 minutes: the narrowest width with at most 240 buckets is 15 s.
	if tl.BucketSeconds != 15 || tl.Buckets != 161 || !tl.Start.Equal(at("2026-11-22T10:00:00Z")) {
		t.Fatalf("grid: got %d s x %d from %v, want 15 s x 161 from 10:00", tl.BucketSeconds, tl.Buckets, tl.Start)
	}
	sum := func(v []uint64) (n uint64) {
		for _, x := range v {
			n += x
		}
		return n
	}
	if a, d, w, n := sum(tl.Decisions["allowed"]), sum(tl.Decisions["denied"]), sum(tl.Decisions["would_deny"]), sum(tl.Decisions["not_decided"]); a != 2 || d != 3 || w != 4 || n != 1 {
		t.Errorf("decisions: got allowed %d denied %d would_deny %d not_decided %d, want 2 3 4 1", a, d, w, n)
	}
	if got := tl.Access["unreachable"][3*4]; got != 1 {
		t.Errorf("unreachable at 10:03: got %d, want 1", got)
	}
	if len(tl.Tokens) != 4 || tl.Tokens[0].Token != "gptbot" || sum(tl.Tokens[0].WouldDeny) != 4 {
		t.Errorf("token series: got %+v", tl.Tokens)
	}
}

func TestFilters(t *testing.T) {
	for _, c := range []struct {
		name               string
		o                  Options
		requests, filtered uint64
	}{
		{"token", Options{Token: "GPTBot"}, 5, 5},
		{"host, any case", Options{Host: "B.Example"}, 5, 5},
		{"since inclusive, until exclusive", Options{Since: at("2026-11-22T10:05:00Z"), Until: at("2026-11-22T10:30:00Z")}, 3, 7},
		{"nothing left", Options{Token: "nobody"}, 0, 10},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep, _ := collectSample(t, c.o)
			if rep.Summary.Requests != c.requests || rep.Summary.Filtered != c.filtered || rep.Summary.Skipped != 3 {
				t.Errorf("got requests %d filtered %d skipped %d, want %d %d 3", rep.Summary.Requests, rep.Summary.Filtered, rep.Summary.Skipped, c.requests, c.filtered)
			}
		})
	}
}

func TestTopLimitsRows(t *testing.T) {
	rep, _ := collectSample(t, Options{Top: 2})
	if len(rep.DeniedURLs.Rows) != 2 || rep.DeniedURLs.MoreNotShown != 4 {
		t.Errorf("denied URLs with Top 2: got %d rows, %d more, want 2 rows, 4 more", len(rep.DeniedURLs.Rows), rep.DeniedURLs.MoreNotShown)
	}
	var b strings.Builder
	if err := Render(&b, rep, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "(4 more URLs not shown)") {
		t.Errorf("text: want \"(4 more URLs not shown)\" in\n%s", b.String())
	}
}

// A report-mode denial that waited for politeness is logged with the wait's
// cause as its reason and robots.txt's in robots_reason: it is the same
// violation as one that did not wait. An enforced denial counts by
// robots.txt's reason too; the summary counts the reasons as logged.
func TestViolationsRobotsReason(t *testing.T) {
	const l = `{"time":"2026-11-22T10:0%d:00Z","url":"https://b.example/p","decision":"deny","reason":%q,%s"product_token":"gptbot","robots_url":"https://b.example/robots.txt","rule":"Disallow: /p","rule_line":2,"access_result":"successful","enforced":false,"robots_sha256":"bbb1"}` + "\n"
	log := fmt.Sprintf(l, 1, "rule", "") + fmt.Sprintf(l, 2, "crawl-delay", `"waited_ms":900,"robots_reason":"rule","wait_reason":"crawl-delay",`) +
		strings.Replace(fmt.Sprintf(l, 3, "backoff", `"robots_reason":"rule",`), `"enforced":false`, `"enforced":true`, 1)
	rep, err := Collect([]string{writeFile(t, t.TempDir(), "audit.log", log)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []ViolationRow{{Token: "gptbot", Host: "b.example", Origin: "https://b.example", RobotsURL: "https://b.example/robots.txt", Rule: "Disallow: /p", RuleLine: 2, RobotsSHA256: "bbb1", Reason: "rule",
		Count: 2, FirstSeen: at("2026-11-22T10:01:00Z"), LastSeen: at("2026-11-22T10:02:00Z")}}
	if !reflect.DeepEqual(rep.Violations.Rows, want) {
		t.Errorf("violations:\ngot  %+v\nwant %+v", rep.Violations.Rows, want)
	}
	if tok := rep.Tokens.Rows[0]; tok.WouldDeny != 2 || tok.DeniedByRule != 1 || tok.OtherRefusals != 0 {
		t.Errorf("token: got %+v, want 2 would deny, 1 denied by rule", tok)
	}
	wantReasons := []Count{{"backoff", 1, 1, 0}, {"crawl-delay", 1, 0, 1}, {"rule", 1, 0, 1}}
	if !reflect.DeepEqual(rep.Summary.Reasons, wantReasons) {
		t.Errorf("reasons: got %+v, want the logged ones %+v", rep.Summary.Reasons, wantReasons)
	}
}

// TestCreditGoesToTheCrawler: a line whose product_token is the device
// product that came first in its User-Agent is credited to the candidate
// whose group decided; a pinned token and a catalogue's name stay.
func TestCreditGoesToTheCrawler(t *testing.T) {
	log := `{"time":"2026-11-22T10:00:00Z","method":"GET","url":"https://a.example/x","decision":"deny","reason":"rule","product_token":"SAMSUNG-SGH-E250","token_source":"user-agent","candidates":["SAMSUNG-SGH-E250","Googlebot-Mobile"],"group":"googlebot-mobile","star_fallback":false,"robots_url":"https://a.example/robots.txt","rule":"Disallow: /","rule_line":2,"access_result":"successful"}
{"time":"2026-11-22T10:00:01Z","method":"GET","url":"https://a.example/y","decision":"deny","reason":"rule","product_token":"DoCoMo","token_source":"user-agent","candidates":["DoCoMo","Googlebot-Mobile"],"group":"*","star_fallback":true,"robots_url":"https://a.example/robots.txt","rule":"Disallow: /","rule_line":5,"access_result":"successful"}
{"time":"2026-11-22T10:00:02Z","method":"GET","url":"https://a.example/z","decision":"deny","reason":"rule","product_token":"Slurp","token_source":"catalogue","candidates":["Slurp","Yahoo"],"group":"yahoo","star_fallback":false,"robots_url":"https://a.example/robots.txt","rule":"Disallow: /","rule_line":8,"access_result":"successful"}
{"time":"2026-11-22T10:00:03Z","method":"GET","url":"https://a.example/w","decision":"deny","reason":"rule","product_token":"mybot","token_source":"credentials","candidates":["mybot"],"group":"googlebot-mobile","star_fallback":false,"robots_url":"https://a.example/robots.txt","rule":"Disallow: /","rule_line":2,"access_result":"successful"}
`
	rep, err := Collect([]string{writeFile(t, t.TempDir(), "audit.log", log)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rep.Tokens.Rows {
		got = append(got, r.Token)
	}
	want := []string{"DoCoMo", "Googlebot-Mobile", "Slurp", "mybot"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("crawlers %q, want %q", got, want)
	}
	for _, s := range rep.Summary.TokenSources {
		if s.Key == "other" {
			t.Errorf("token sources %+v: catalogue counted as other", rep.Summary.TokenSources)
		}
	}
}
