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
// as a failed fetch, and moves on; a typed error would instead read as a
// network failure, which many crawlers retry, and would hide the reason
// headers a proxied crawler gets. Refusal tells the proxy's refusals from an origin's own
// 403. Errors are kept for what is one: the wrapped transport's own error
// (the origin could not be reached; behind the proxy a 502), returned as
// is, and ErrCutOff for a request cut off because its audit line could
// not be written (behind the proxy, a closed connection).
//
// The request is the proxy's client request: its User-Agent names the
// crawler, and a Proxy-Authorization header, if set, pins an identity as
// identity.users do behind the proxy. It has no client address: the audit
// line's client is empty, and identity.client_ranges pin nothing.
//
// With Colly:
//
//	t, err := enforce.New(enforce.Options{Config: cfg})
//	...
//	c.WithTransport(t)
//
// The configuration is robotsproxy's (LoadConfig, docs/configuration.md,
// docs/enforce.md): the listeners, connect.*, mitm.*, upstream.* and the
// admin endpoint concern the proxy's sockets and have no effect here, and
// the destination guard (allow_private, allow_private_ranges) applies to the
// robots.txt fetches, while the wrapped transport dials the origins.
package enforce
