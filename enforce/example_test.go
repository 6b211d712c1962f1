package enforce_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/robotsproxy/robotsproxy/enforce"
)

// A crawler's http.Client obeys robots.txt through enforce.Transport: the
// disallowed page is refused with the proxy's 403, the allowed one is
// fetched, and each request leaves its audit line.
func Example() {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nDisallow: /private/\n")
			return
		}
		io.WriteString(w, "page "+r.URL.Path+"\n")
	}))
	defer origin.Close()

	cfg, err := enforce.ParseConfig(strings.NewReader("allow_private: true\n")) // the origin is on 127.0.0.1
	if err != nil {
		panic(err)
	}
	var audit bytes.Buffer
	t := enforce.MustNew(enforce.Options{Config: cfg, Audit: &audit})
	client := &http.Client{Transport: t}
	for _, path := range []string{"/public/a", "/private/b"} {
		req, _ := http.NewRequest("GET", origin.URL+path, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			panic(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		reason, refused := enforce.Refusal(resp)
		fmt.Printf("%s %d refused=%v %q\n", path, resp.StatusCode, refused, reason)
	}
	t.Close()

	for _, line := range strings.Split(strings.TrimSpace(audit.String()), "\n") {
		var l struct {
			URL, Decision, Reason, Rule string
			Token                       string `json:"product_token"`
			Status                      int
		}
		json.Unmarshal([]byte(line), &l)
		fmt.Printf("%s %s %s %s %q %d\n", strings.TrimPrefix(l.URL, origin.URL), l.Token, l.Decision, l.Reason, l.Rule, l.Status)
	}
	// Output:
	// /public/a 200 refused=false ""
	// /private/b 403 refused=true "rule"
	// /public/a ExampleBot allow no-matching-rule "" 200
	// /private/b ExampleBot deny rule "Disallow: /private/" 403
}
