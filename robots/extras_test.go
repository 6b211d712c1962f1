package robots_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/robots"
)

func TestParseCrawlDelay(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"10", 10 * time.Second, true},
		{"0", 0, true},
		{"0.5", 500 * time.Millisecond, true},
		{".25", 250 * time.Millisecond, true},
		{"2.", 2 * time.Second, true},
		{"1.0000000019", time.Second + 1, true}, // past nanoseconds: dropped
		{"99999999999999999999", 1<<63 - 1, true},
		{"9223372036.854775808", 1<<63 - 1, true},
		{"9223372036.854775807", 1<<63 - 1, true},
		{"", 0, false},
		{".", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1e2", 0, false},
		{"inf", 0, false},
		{"nan", 0, false},
		{"10s", 0, false},
		{"10 seconds", 0, false},
		{"1,5", 0, false},
		{"1.2.3", 0, false},
		{"١٠", 0, false}, // Arabic-Indic digits
	}
	for _, c := range cases {
		got, ok := robots.ParseCrawlDelay(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("ParseCrawlDelay(%q): got %v %v, want %v %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestParseRequestRate(t *testing.T) {
	hm := func(h, m int) time.Duration { return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute }
	cases := []struct {
		in       string
		want     robots.RequestRate
		interval time.Duration
		ok       bool
	}{
		{"1/5", robots.RequestRate{Requests: 1, Period: 5 * time.Second}, 5 * time.Second, true},
		{"1/5s", robots.RequestRate{Requests: 1, Period: 5 * time.Second}, 5 * time.Second, true},
		{"10/1m", robots.RequestRate{Requests: 10, Period: time.Minute}, 6 * time.Second, true},
		{"1/1h", robots.RequestRate{Requests: 1, Period: time.Hour}, time.Hour, true},
		{"2/1D", robots.RequestRate{Requests: 2, Period: 24 * time.Hour}, 12 * time.Hour, true},
		{"6/1M", robots.RequestRate{Requests: 6, Period: time.Minute}, 10 * time.Second, true},
		{"1 / 5", robots.RequestRate{Requests: 1, Period: 5 * time.Second}, 5 * time.Second, true}, // urllib.robotparser
		{"50/1m 2100-0459", robots.RequestRate{Requests: 50, Period: time.Minute, HasWindow: true, From: hm(21, 0), To: hm(4, 59)}, 1200 * time.Millisecond, true},
		{"1/10 600-845", robots.RequestRate{Requests: 1, Period: 10 * time.Second, HasWindow: true, From: hm(6, 0), To: hm(8, 45)}, 10 * time.Second, true},
		{"3/10", robots.RequestRate{Requests: 3, Period: 10 * time.Second}, 3333333333, true},
		{"0/5", robots.RequestRate{}, 0, false},
		{"1/0", robots.RequestRate{}, 0, false},
		{"1/0m", robots.RequestRate{}, 0, false},
		{"1", robots.RequestRate{}, 0, false},
		{"1/", robots.RequestRate{}, 0, false},
		{"/5", robots.RequestRate{}, 0, false},
		{"1/5x", robots.RequestRate{}, 0, false},
		{"1/5 s", robots.RequestRate{}, 0, false},
		{"1/5s0600-0845", robots.RequestRate{}, 0, false},
		{"1/5 2400-0100", robots.RequestRate{}, 0, false},
		{"1/5 0060-0100", robots.RequestRate{}, 0, false},
		{"1/5 0600", robots.RequestRate{}, 0, false},
		{"1.5/5", robots.RequestRate{}, 0, false},
		{"-1/5", robots.RequestRate{}, 0, false},
		{"1/1234567890", robots.RequestRate{}, 0, false},
		{"999999999/999999999d", robots.RequestRate{Requests: 999999999, Period: 1<<63 - 1}, 9223372046, true},
	}
	for _, c := range cases {
		got, ok := robots.ParseRequestRate(c.in)
		if got != c.want || ok != c.ok || got.Interval() != c.interval {
			t.Errorf("ParseRequestRate(%q): got %+v %v interval %v, want %+v %v interval %v", c.in, got, ok, got.Interval(), c.want, c.ok, c.interval)
		}
	}
}

// TestRecordsDoNotEndGroup checks RFC 9309 2.2.4 for every record the
// package reads: a crawl-delay between user-agent lines leaves them in one
// group, where Protego 0.6.1 and temoto/robotstxt start a new group at the
// second user-agent line (and Python's urllib.robotparser too).
func TestRecordsDoNotEndGroup(t *testing.T) {
	for _, rec := range []string{"Crawl-delay: 5", "Request-rate: 1/5", "Sitemap: https://example.com/s.xml",
		"Content-Signal: ai-train=no", "Content-Usage: train-ai=n", "Visit-time: 0600-0845", "Host: example.com"} {
		body := "User-agent: a\n" + rec + "\nUser-agent: b\nDisallow: /\n"
		r := robots.Parse([]byte(body))
		if r.NumGroups() != 1 {
			t.Errorf("%q: got %d groups, want 1", rec, r.NumGroups())
		}
		for _, agent := range []string{"a", "b"} {
			if r.Test("/x", agent).Allowed {
				t.Errorf("%q: %s allowed /x, want disallowed\nbody:\n%s", rec, agent, body)
			}
		}
	}
	r := robots.Parse([]byte("User-agent: a\nCrawl-delay: 5\nUser-agent: b\nDisallow: /\n"))
	for _, agent := range []string{"a", "b"} {
		if d, ok := r.Extras(agent).CrawlDelay(); !ok || d != 5*time.Second {
			t.Errorf("%s: crawl-delay got %v %v, want 5s", agent, d, ok)
		}
	}
}

func TestExtrasGroups(t *testing.T) {
	body := `Crawl-delay: 99
Content-Signal: search=yes
User-agent: a
Crawl-delay: 2
Request-rate: 1/10
Disallow: /x

User-agent: *
Crawl-delay: 1.5
Crawl-delay: oops
Request-rate: 10/1m 0500-2059
Request-rate: 50/1m 2100-0459
Allow: /

User-agent: a
Crawl-delay: 7
Crawl-delay: 3
Request-rate: 1/20
Content-Signal: search=no, ai-train=yes
Allow: /

User-agent: c
Crawldelay: 4
Request-rate: nonsense
`
	r := robots.Parse([]byte(body))
	cases := []struct {
		tokens     []string
		agent      string
		fallback   bool
		delay      time.Duration
		delayLine  int
		ok         bool
		rateLine   int
		rates      int
		searchPref string
		searchLine int
	}{
		{[]string{"a"}, "a", false, 7 * time.Second, 16, true, 18, 2, "no", 19},
		{[]string{"A"}, "a", false, 7 * time.Second, 16, true, 18, 2, "no", 19},
		{[]string{"zbot"}, "*", true, 1500 * time.Millisecond, 9, true, 11, 2, "yes", 2},
		{[]string{"c"}, "c", false, 4 * time.Second, 23, true, 0, 0, "yes", 2},
		{[]string{"zbot", "c", "a"}, "c", false, 7 * time.Second, 16, true, 18, 2, "no", 19},
	}
	for _, c := range cases {
		e := r.Extras(c.tokens...)
		d, ok := e.CrawlDelay()
		rr, rok := e.RequestRate()
		s, sok := e.ContentSignal("search")
		if e.Agent != c.agent || e.Fallback != c.fallback || d != c.delay || ok != c.ok || e.CrawlDelayLine() != c.delayLine ||
			rr.Line != c.rateLine || rok != (c.rateLine != 0) || len(e.RequestRates()) != c.rates ||
			!sok || s.Value != c.searchPref || s.Line != c.searchLine {
			t.Errorf("%v: got agent %q fallback %v delay %v %v line %d rate %+v (%d) search %+v %v", c.tokens, e.Agent, e.Fallback,
				d, ok, e.CrawlDelayLine(), rr, len(e.RequestRates()), s, sok)
		}
	}
	// The most restrictive rate of the "*" group: 10/1m (6 s) over 50/1m.
	if rr, _ := r.Extras("zbot").RequestRate(); rr.Requests != 10 || rr.Interval() != 6*time.Second || !rr.HasWindow {
		t.Errorf("* request rate: got %+v", rr)
	}
	none := robots.Parse([]byte("User-agent: a\nDisallow: /\n")).Extras("zbot")
	if _, ok := none.CrawlDelay(); ok || none.Agent != "" || none.ContentSignals() != nil || none.RequestRates() != nil {
		t.Errorf("no group applies: got %+v", none)
	}
	var zero robots.Robots
	if e := zero.Extras("a"); e.Agent != "" {
		t.Errorf("zero Robots: got %+v", e)
	}
}

// contentSignalsOrg is the example robots.txt of contentsignals.org, as
// quoted in google/robotstxt issue 80 ("robots.txt taken from
// https://contentsignals.org/").
const contentSignalsOrg = `# As a condition of accessing this website, you agree to abide by
# the following content signals:

# (a)  If a content-signal = yes, you may collect content for the
# corresponding use.
# (b)  If a content-signal = no, you may not collect content for
# the corresponding use.
# (c)  If the website operator does not include a content signal
# for a corresponding use, the website operator neither grants nor
# restricts permission via content signal with respect to the
# corresponding use.

# The content signals and their meanings are:

# search: building a search index and providing search results
# (e.g., returning hyperlinks and short excerpts from your
# website's contents).  Search does not include providing
# AI-generated search summaries.
# ai-input: inputting content into one or more AI models (e.g.,
# retrieval augmented generation, grounding, or other real-time
# taking of content for generative AI search answers).
# ai-train: training or fine-tuning AI models.

# ANY RESTRICTIONS EXPRESSED VIA CONTENT SIGNALS ARE EXPRESS
# RESERVATIONS OF RIGHTS UNDER ARTICLE 4 OF THE EUROPEAN UNION
# DIRECTIVE 2019/790 ON COPYRIGHT AND RELATED RIGHTS IN THE
# DIGITAL SINGLE MARKET.

User-Agent: *
Content-Signal: ai-train=no, search=yes, ai-input=yes
Allow: /
`

// cloudflareManaged is the "Feature enabled" example of Cloudflare's
// managed robots.txt documentation (cloudflare/cloudflare-docs,
// src/content/docs/bots/additional-configurations/managed-robots-txt.mdx),
// without its policy comment block (the one above): Cloudflare's block
// prepended to a site's own file, two "*" groups.
const cloudflareManaged = `# BEGIN Cloudflare Managed content

User-Agent: *
Content-signal: search=yes, ai-train=no
Allow: /

User-agent: Amazonbot
Disallow: /

User-agent: Applebot-Extended
Disallow: /

User-agent: Bytespider
Disallow: /

User-agent: CCBot
Disallow: /

User-agent: ClaudeBot
Disallow: /

User-agent: Google-Extended
Disallow: /

User-agent: GPTBot
Disallow: /

User-agent: meta-externalagent
Disallow: /

# END Cloudflare Managed Content
User-agent: *
Disallow: /lp
Disallow: /feedback
Disallow: /langtest

Sitemap: https://www.crawlstop.com/sitemap.xml
`

// cloudflareManagedUse is the managed block as Cloudflare serves it later,
// with the "use" signal (as in two corpus files, www.ebsco.com and
// www.researchsquare.com), shortened to its first groups.
const cloudflareManagedUse = `# BEGIN Cloudflare Managed content

User-agent: *
Content-Signal: search=yes,ai-train=no,use=reference
Allow: /

User-agent: Amazonbot
Disallow: /
`

// cloudflareCom is www.cloudflare.com/robots.txt as stored in Protego's
// benchmark corpus (scrapy/protego benchmarks/corpus/www.cloudflare.com):
// its Content-Signal line comes after the Cohere-ai group's rule, so it is
// part of that group only (RFC 9309 2.1).
const cloudflareCom = `# Robots.txt for www.cloudflare.com

User-agent: *
Allow: /

# Sitemap
Sitemap: https://www.cloudflare.com/sitemap.xml

# AI/LLM friendly content
# See https://llmstxt.org for the llms.txt specification
# llms.txt provides curated content for AI assistants and LLMs

# Allow AI crawlers to access markdown versions of pages
User-agent: GPTBot
Allow: /

User-agent: ChatGPT-User
Allow: /

User-agent: Google-Extended
Allow: /

User-agent: Anthropic-AI
Allow: /

User-agent: Claude-Web
Allow: /

User-agent: CCBot
Allow: /

User-agent: PerplexityBot
Allow: /

User-agent: Cohere-ai
Allow: /

# Content Signals — declare AI content usage preferences
# See https://contentsignals.org/ and https://datatracker.ietf.org/doc/draft-romm-aipref-contentsignals/
Content-Signal: ai-train=yes, search=yes, ai-input=yes

# AI-friendly content locations
# - /llms.txt - Curated overview for AI/LLMs (markdown)
# - /llms-full.txt - Full expanded content for larger context windows
# - /*.md - Markdown versions of all pages (append .md to any URL)
# - /.well-known/agents.json - Agent discovery and capabilities
`

// TestContentSignalExamples covers Cloudflare's published examples.
func TestContentSignalExamples(t *testing.T) {
	sig := func(k, v string, line int) robots.ContentSignal {
		return robots.ContentSignal{Key: k, Value: v, Line: line}
	}
	cases := []struct {
		name   string
		body   string
		tokens []string
		want   map[string]robots.ContentSignal
	}{
		{"contentsignals.org", contentSignalsOrg, []string{"AnyBot"}, map[string]robots.ContentSignal{
			"ai-train": sig("ai-train", "no", 30), "search": sig("search", "yes", 30), "ai-input": sig("ai-input", "yes", 30)}},
		{"managed: * merged with the site's * group", cloudflareManaged, []string{"Googlebot"}, map[string]robots.ContentSignal{
			"search": sig("search", "yes", 4), "ai-train": sig("ai-train", "no", 4)}},
		{"managed: a named group has no signal", cloudflareManaged, []string{"GPTBot"}, nil},
		{"managed with use", cloudflareManagedUse, []string{"AnyBot"}, map[string]robots.ContentSignal{
			"search": sig("search", "yes", 4), "ai-train": sig("ai-train", "no", 4), "use": sig("use", "reference", 4)}},
		{"www.cloudflare.com: Cohere-ai's group", cloudflareCom, []string{"cohere-ai"}, map[string]robots.ContentSignal{
			"ai-train": sig("ai-train", "yes", 40), "search": sig("search", "yes", 40), "ai-input": sig("ai-input", "yes", 40)}},
		{"www.cloudflare.com: not the * group", cloudflareCom, []string{"AnyBot"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := robots.Parse([]byte(c.body)).Extras(c.tokens...).ContentSignals(); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%v: got %+v, want %+v", c.tokens, got, c.want)
			}
		})
	}
	r := robots.Parse([]byte(cloudflareManaged))
	if v := r.Test("/lp/x", "Googlebot"); v.Allowed || v.Rule.Line != 33 {
		t.Errorf("managed: /lp/x got allowed=%v line %d, want the site's disallow on line 33", v.Allowed, v.Rule.Line)
	}
	if got := r.SitemapURLs(); !reflect.DeepEqual(got, []string{"https://www.crawlstop.com/sitemap.xml"}) {
		t.Errorf("managed: sitemaps %q", got)
	}
}

func TestContentSignalCombine(t *testing.T) {
	body := "Content-Signal: ai-input=yes, use=full\nUser-agent: a\nContent-Signal: Search=YES, ai-train=yes\nAllow: /\n" +
		"User-agent: a\nContent-signal: search=no, ai-input=maybe, use=reference, bad entry, =x, ,\n"
	e := robots.Parse([]byte(body)).Extras("a")
	want := map[string]robots.ContentSignal{
		"search":   {Key: "search", Value: "no", Line: 6},
		"ai-train": {Key: "ai-train", Value: "yes", Line: 3},
		"ai-input": {Key: "ai-input", Value: "yes", Line: 1},
		"use":      {Key: "use", Value: "full", Line: 1},
	}
	if got := e.ContentSignals(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if s, ok := e.ContentSignal("SEARCH"); !ok || s.Pref() != robots.PrefDisallow || s.Key != "search" {
		t.Errorf("ContentSignal(SEARCH): got %+v %v", s, ok)
	}
	if _, ok := e.ContentSignal("other"); ok {
		t.Errorf("ContentSignal(other) found")
	}
	sigs, ok := robots.ParseContentSignal("search=no, ai-input=maybe, use=reference, bad entry, =x, ,")
	if ok || len(sigs) != 3 || sigs[1] != (robots.ContentSignal{Key: "ai-input", Value: "maybe"}) || sigs[1].Pref() != robots.PrefUnknown {
		t.Errorf("ParseContentSignal: got %+v %v", sigs, ok)
	}
	if _, ok := robots.ParseContentSignal("search = yes ,ai-train=no"); !ok {
		t.Errorf("white space around = and , must be accepted")
	}
}

func TestSitemapURLs(t *testing.T) {
	body := "Sitemap: https://a.example/s.xml\nuser-agent: *\nsitemap: /relative.xml\nSitemap: ftp://a.example/s.xml\n" +
		"site-map: http://b.example/s.xml.gz\nSitemap: https://a.example/s.xml\nSitemap: http://\nSitemap: %zz\n"
	r := robots.Parse([]byte(body))
	want := []string{"https://a.example/s.xml", "http://b.example/s.xml.gz"}
	if got := r.SitemapURLs(); !reflect.DeepEqual(got, want) {
		t.Errorf("SitemapURLs: got %q, want %q", got, want)
	}
	if got := len(r.Sitemaps()); got != 7 {
		t.Errorf("Sitemaps keeps every value: got %d, want 7", got)
	}
}

func TestExtrasNoAlloc(t *testing.T) {
	plain := robots.Parse([]byte(rfcSimple))
	with := robots.Parse([]byte(cloudflareManaged + "User-agent: *\nCrawl-delay: 2\nRequest-rate: 1/5\n"))
	allocs := testing.AllocsPerRun(100, func() {
		_ = plain.Extras("FooBot")
		e := with.Extras("Googlebot")
		if d, _ := e.CrawlDelay(); d != 2*time.Second {
			panic("crawl-delay")
		}
		if s, _ := e.ContentSignal("ai-train"); s.Value != "no" {
			panic("signal")
		}
	})
	if allocs != 0 {
		t.Errorf("Extras allocated %.1f times per run, want 0", allocs)
	}
}
