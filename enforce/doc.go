// Package enforce makes a Go crawler obey robots.txt in its own process:
// Transport is an http.RoundTripper that wraps the crawler's transport and
// applies robotsproxy's enforcement to every request, with no proxy to run.
//
// Each request goes through the proxy's own request path (package proxy),
// assembled from the proxy's configuration by the same code as the
// robotsproxy binary (package server): the product token is taken from the
// request's User-Agent (RFC 9309 2.2.1), robots.txt is fetched and cached
// (RFC 9309 2.3, 2.4), the rules are matched (longest match, RFC 9309
// 2.2.2), usage preferences and licenses are checked when configured,
// crawl-delay and back-off are honoured (politeness.*), and one audit line
// is written per request, with the same fields and chain as the proxy's.
//
// A refused request never reaches the wrapped transport. RoundTrip then
// returns, with a nil error, the response the proxy would have sent: 403
// Forbidden (429 while politeness refuses an early request, 503 while the
// audit log cannot be written) whose X-Robotsproxy-Decision header is
// "deny" and whose X-Robotsproxy-Reason names the reason (see Refusal). A
// crawler thus sees exactly what it would see behind the proxy, counts it
// as a failed fetch, and moves on; an error would instead read as a
// network failure, which crawlers retry. Errors are kept for what is one:
// the origin could not be reached (the proxy's 502 is returned as a
// response too, as behind the proxy), or the request was cut off because
// its audit line could not be written (ErrCutOff).
//
// With Colly:
//
//	t, err := enforce.New(enforce.Options{Config: cfg})
//	...
//	c.WithTransport(t)
//
// The configuration is robotsproxy's (config.LoadFile, docs/configuration.md):
// listeners, interception and the admin endpoint have no effect here, and
// the destination guard (allow_private, private_ranges) applies to the
// robots.txt fetches, while the wrapped transport dials the origins.
package enforce
