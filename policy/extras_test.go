package policy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestDecisionCarriesExtras: a decision carries the extras and usage
// preferences of the groups that apply to the tokens it was decided for,
// usage preferences read for the path reading that decided.
func TestDecisionCarriesExtras(t *testing.T) {
	r := robots.Parse([]byte("User-agent: *\nDisallow: /nothing/\nCrawl-delay: 2\nContent-Signal: search=yes\n\n" +
		"User-agent: ExampleBot\nCrawl-delay: 7\nRequest-rate: 1/10s\nContent-Signal: ai-train=no\n" +
		"Content-Usage: /ai/ train-ai=n\nDisallow: /private/\n"))
	ok := &policy.Access{Result: policy.Successful, Status: 200, Robots: r}
	tests := []struct {
		name   string
		a      *policy.Access
		path   string
		tokens []string
		delay  time.Duration // 0: none
		prefs  string        // the preferences' lines, "" when none
	}{
		{"named group", ok, "/x", []string{"ExampleBot"}, 7 * time.Second, "line 9: Content-Signal: ai-train=no"},
		{"rule's path", ok, "/ai/x", []string{"ExampleBot"}, 7 * time.Second,
			"line 10: Content-Usage: /ai/ train-ai=n|line 9: Content-Signal: ai-train=no"},
		{"the reading that decided", ok, "/x/..%2Fai/y", []string{"ExampleBot"}, 7 * time.Second,
			"line 10: Content-Usage: /ai/ train-ai=n|line 9: Content-Signal: ai-train=no"},
		{"catch-all group", ok, "/ai/x", []string{"OtherBot"}, 2 * time.Second, "line 4: Content-Signal: search=yes"},
		{"no robots.txt read", &policy.Access{Result: policy.Unavailable, Status: 404}, "/x", []string{"ExampleBot"}, 0, ""},
		{"no access", nil, "/x", []string{"ExampleBot"}, 0, ""},
		{"none stated", &policy.Access{Result: policy.Successful, Status: 200, Robots: robots.Parse([]byte("User-agent: *\nDisallow: /x\n"))},
			"/y", []string{"ExampleBot"}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := policy.DecideAccess(tt.a, tt.path, tt.tokens)
			if d.CrawlDelay != tt.delay || d.HasCrawlDelay != (tt.delay != 0) {
				t.Errorf("crawl delay %v (%v), want %v", d.CrawlDelay, d.HasCrawlDelay, tt.delay)
			}
			if got := prefLines(d.UsagePrefs); got != tt.prefs {
				t.Errorf("UsagePrefs = %q, want %q", got, tt.prefs)
			}
		})
	}
}

// prefLines joins the lines of p with "|".
func prefLines(p policy.Preferences) string {
	var lines []string
	for _, s := range p {
		lines = append(lines, s.String())
	}
	return strings.Join(lines, "|")
}

// BenchmarkDecideAccessExtras decides a path against a robots.txt with a
// crawl delay, the decision reading its extras.
func BenchmarkDecideAccessExtras(b *testing.B) {
	r := robots.Parse([]byte("User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n\n" +
		"User-agent: ExampleBot\nDisallow: /nope/\nCrawl-delay: 5\n"))
	a := &policy.Access{Result: policy.Successful, Status: 200, Robots: r}
	tokens := []string{"ExampleBot"}
	b.ReportAllocs()
	for b.Loop() {
		policy.DecideAccess(a, "/some/page.html", tokens)
	}
}
