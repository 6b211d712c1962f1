package proxy

import (
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// isHopHeader reports whether k (a canonical field name) is one of the
// hop-by-hop fields a proxy removes in both directions (RFC 9110 7.6.1;
// RFC 9112 7.4 for TE; Proxy-* are for this proxy only; Trailer is kept
// when the message carries trailers, see Go's httputil.ReverseProxy, whose
// list this follows).
func isHopHeader(k string) bool {
	switch k {
	case "Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Transfer-Encoding", "Upgrade":
		return true
	}
	return false
}

// removeHopHeaders removes from h every field named in its Connection
// header and the hop-by-hop fields. When upgrade is true (an HTTP/1.1
// upgrade, e.g. a WebSocket handshake: RFC 9110 7.8) Connection: Upgrade
// and Upgrade are kept, since they are the handshake itself.
//
// Its callers skip it when hasHopHeader says there is nothing to remove
// (the common case: one pass over a few keys).
func removeHopHeaders(h http.Header, upgrade bool) {
	for _, v := range h["Connection"] {
		for _, name := range strings.Split(v, ",") {
			name = textproto.TrimString(name)
			if name == "" || upgrade && strings.EqualFold(name, "Upgrade") {
				continue
			}
			h.Del(name)
		}
	}
	trailers := httpguts.HeaderValuesContainsToken(h["Te"], "trailers")
	for k := range h {
		if isHopHeader(k) && !(upgrade && (k == "Connection" || k == "Upgrade")) {
			delete(h, k)
		}
	}
	if upgrade {
		h.Set("Connection", "Upgrade")
	}
	if trailers {
		h.Set("Te", "trailers") // RFC 9110 10.1.4: asks for trailers end to end
	}
}

// hasHopHeader reports whether h has any hop-by-hop field (isHopHeader). Without one there
// is nothing to remove: fields named in Connection go only when
// Connection is there.
func hasHopHeader(h http.Header) bool {
	for k := range h {
		if isHopHeader(k) {
			return true
		}
	}
	return false
}

// prepareOutbound readies an allowed request for the origin: hop-by-hop
// fields go, those of a WebSocket handshake excepted (an Upgrade to
// anything else is not forwarded: see switch.go), and a request sent with no User-Agent is forwarded with none
// (Go's transport would add "Go-http-client/1.1"; an empty value makes it
// send none).
func prepareOutbound(r *http.Request) {
	if hasHopHeader(r.Header) {
		removeHopHeaders(r.Header, isWebSocketUpgrade(r.Header))
	}
	if _, ok := r.Header["User-Agent"]; !ok {
		r.Header["User-Agent"] = []string{""}
	}
}

// prepareInbound readies an origin's response for the client: hop-by-hop
// fields go, except the handshake fields of a WebSocket switch (101).
func prepareInbound(resp *http.Response) {
	if !hasHopHeader(resp.Header) {
		return
	}
	removeHopHeaders(resp.Header, resp.StatusCode == http.StatusSwitchingProtocols && isWebSocketUpgrade(resp.Header))
}
