package proxy_test

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/robotsproxy/robotsproxy/proxy"
)

// TestDenialsRendered: robots.txt denials written from their rendering
// (once per robots.txt URL, rule or status, and product token) carry the
// rule, token and body of their own decision however often and in whatever
// order they come, HEAD ones included, and their audit lines count what
// the client got.
func TestDenialsRendered(t *testing.T) {
	o := newOrigin(t, serveRobots("User-agent: ExampleBot\nDisallow: /a\nDisallow: /b\n\nUser-agent: OtherBot\nDisallow: /a\n\nUser-agent: *\nDisallow: /c\n"))
	same := newOrigin(t, serveRobots("User-agent: ExampleBot\nDisallow: /a\n")) // the same rule elsewhere
	down := newOrigin(t, statusRobots(503))
	h := newHarness(t, harnessOptions{})
	type want struct {
		reason, token, rule string
	}
	a := want{"rule", "ExampleBot", "line 2: Disallow: /a"}
	b := want{"rule", "ExampleBot", "line 3: Disallow: /b"}
	other := want{"rule", "OtherBot", "line 6: Disallow: /a"}
	unreachable := want{"unreachable", "ExampleBot", ""}
	star1, star2 := want{"rule", "UnknownBot", "line 9: Disallow: /c"}, want{"rule", "AnotherBot", "line 9: Disallow: /c"}
	bodies := map[want]string{}
	for i, c := range []struct {
		origin           *origin
		method, path, ua string
		want             want
	}{
		{o, "GET", "/a", "ExampleBot/1.0", a},
		{o, "GET", "/a/x", "ExampleBot/2.0", a},
		{o, "GET", "/b", "ExampleBot/1.0", b},
		{o, "GET", "/a", "OtherBot/1.0", other},
		{o, "HEAD", "/a", "ExampleBot/1.0", a},
		{o, "GET", "/b?q", "ExampleBot/1.0", b},
		{down, "GET", "/a", "ExampleBot/1.0", unreachable},
		{down, "GET", "/b", "ExampleBot/1.0", unreachable},
		{o, "GET", "/a", "OtherBot/1.0", other},
		{same, "GET", "/a", "ExampleBot/1.0", a},
		{o, "GET", "/c", "UnknownBot/1.0", star1},
		{o, "GET", "/c", "AnotherBot/1.0", star2},
		{down, "GET", "/a", "OtherBot/1.0", want{"unreachable", "OtherBot", ""}},
	} {
		resp, body := h.do(t, c.method, c.origin.URL+c.path, c.ua, "")
		in := strconv.Itoa(i) + " " + c.method + " " + c.origin.URL + c.path + " as " + c.ua
		if got, want := resp.Header.Get(proxy.HeaderRobotsURL), c.origin.URL+"/robots.txt"; got != want {
			t.Errorf("%s: got robots.txt URL %q, want %q", in, got, want)
		}
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get(proxy.HeaderReason) != c.want.reason ||
			resp.Header.Get(proxy.HeaderToken) != c.want.token || resp.Header.Get(proxy.HeaderRule) != c.want.rule {
			t.Errorf("%s: got %d, reason %q, token %q, rule %q; want 403 %q %q %q", in, resp.StatusCode,
				resp.Header.Get(proxy.HeaderReason), resp.Header.Get(proxy.HeaderToken), resp.Header.Get(proxy.HeaderRule),
				c.want.reason, c.want.token, c.want.rule)
		}
		if resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: got Content-Type %q, Cache-Control %q", in, resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"))
		}
		fields := map[string]any{"decision": "deny", "reason": c.want.reason, "product_token": c.want.token,
			"status": 403.0, "method": c.method}
		if c.method == "GET" {
			fields["bytes"] = float64(len(body))
			if prev, ok := bodies[c.want]; ok && prev != body && c.origin != same {
				t.Errorf("%s: got body %q, want the same as before, %q", in, body, prev)
			}
			bodies[c.want] = body
			if resp.ContentLength != int64(len(body)) || len(body) == 0 {
				t.Errorf("%s: got Content-Length %d for a body of %d octets", in, resp.ContentLength, len(body))
			}
		} else if body != "" {
			t.Errorf("%s: got body %q, want none", in, body)
		}
		assertFields(t, lastLine(t, h), fields)
	}
}
