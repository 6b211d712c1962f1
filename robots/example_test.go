package robots_test

import (
	"fmt"

	"github.com/robotsproxy/robotsproxy/robots"
)

func Example() {
	body := []byte(`User-agent: ExampleBot
Disallow: /private/
Allow: /private/public.html

User-agent: *
Disallow: /
`)
	r := robots.Parse(body)
	for _, path := range []string{"/private/x", "/private/public.html", "/other"} {
		v := r.Test(path, "ExampleBot")
		if v.Matched() {
			fmt.Printf("%s allowed=%v by line %d %q\n", path, v.Allowed, v.Rule.Line, v.Rule.Text())
		} else {
			fmt.Printf("%s allowed=%v, no rule matched\n", path, v.Allowed)
		}
	}
	v := r.Test("/other", "OtherBot")
	fmt.Printf("OtherBot: allowed=%v fallback=%v\n", v.Allowed, v.Fallback)
	// Output:
	// /private/x allowed=false by line 2 "Disallow: /private/"
	// /private/public.html allowed=true by line 3 "Allow: /private/public.html"
	// /other allowed=true, no rule matched
	// OtherBot: allowed=false fallback=true
}

func ExampleNormalizePath() {
	fmt.Println(robots.NormalizePath("/foo/bar/%62%61%7A"))
	fmt.Println(robots.NormalizePath("/foo/bar/ツ"))
	fmt.Println(robots.NormalizePath("/a*b"))
	// Output:
	// /foo/bar/baz
	// /foo/bar/%E3%83%84
	// /a%2Ab
}

// ExampleRobots_Usage reads the usage preferences of
// draft-ietf-aipref-attach-05 for a few paths: the example of its section
// 3.4.
func ExampleRobots_Usage() {
	r := robots.Parse([]byte(`User-Agent: *
Allow: /
Disallow: /never/
Content-Usage: train-ai=n
Content-Usage: /ai-ok/ train-ai=y
`))
	for _, path := range []string{"/test", "/never/test", "/ai-ok/test"} {
		u := r.Usage(path, "ExampleBot")
		p := u.Get("train-ai")
		fmt.Printf("%s crawl=%v train-ai=%s line=%d\n", path, u.Verdict.Allowed, p.Pref, p.Line)
	}
	// Output:
	// /test crawl=true train-ai=n line=4
	// /never/test crawl=false train-ai=unknown line=0
	// /ai-ok/test crawl=true train-ai=y line=5
}

// ExampleRobots_Extras reads the crawl-delay, request rate and content
// signals that apply to a crawler.
func ExampleRobots_Extras() {
	r := robots.Parse([]byte(`User-agent: *
Crawl-delay: 2.5
Request-rate: 10/1m
Content-Signal: search=yes, ai-train=no
Allow: /
`))
	e := r.Extras("ExampleBot")
	d, _ := e.CrawlDelay()
	rate, _ := e.RequestRate()
	train, _ := e.ContentSignal("ai-train")
	fmt.Println(d, rate.Interval(), train.Value, train.Line)
	// Output:
	// 2.5s 6s no 4
}
