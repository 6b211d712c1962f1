package outside_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// A proxy asks its policy about every request and renders the decision:
// it forwards what is allowed, answers 403 with the reason before
// anything reaches the origin, and writes one audit line per request.
func Example_proxy() {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "page "+r.URL.Path+"\n")
	}))
	defer origin.Close()
	authority := strings.TrimPrefix(origin.URL, "http://") // 127.0.0.1:PORT

	var audit bytes.Buffer
	p := proxy.New(proxy.Options{
		Policy: policy.New(policy.Options{
			Identifier: firstProduct{},
			Cache:      siteRobots{authority: exampleRobots},
		}),
		// The origin is on 127.0.0.1: the transport refuses non-public
		// addresses unless told otherwise.
		Transport: proxy.NewTransport(proxy.TransportOptions{AllowPrivate: true}),
		Audit:     &audit,
	})
	front := httptest.NewServer(p)
	defer front.Close()
	proxyURL, _ := url.Parse(front.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}

	for _, path := range []string{"/public/a", "/private/b"} {
		req, _ := http.NewRequest("GET", origin.URL+path, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text := strings.ReplaceAll(string(body), authority, "ORIGIN")
		fmt.Printf("%s: %d %q %s", path, resp.StatusCode, resp.Header.Get(proxy.HeaderReason), text)
	}
	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			panic(err)
		}
		rule, _ := l[auditlog.FieldRule].(string) // absent when no rule matched
		fmt.Printf("audit: %v %v %v %q\n", l[auditlog.FieldDecision], l[auditlog.FieldReason], l[auditlog.FieldToken], rule)
	}
	// Output:
	// /public/a: 200 "" page /public/a
	// /private/b: 403 "rule" robotsproxy: http://ORIGIN/robots.txt disallows this URL for product token "ExampleBot" (line 2: Disallow: /private/)
	// audit: allow no-matching-rule ExampleBot ""
	// audit: deny rule ExampleBot "Disallow: /private/"
}
