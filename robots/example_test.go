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
