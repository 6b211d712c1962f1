package proxy

import (
	"net/http"
	"net/textproto"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// hopHeaders are the hop-by-hop fields a proxy removes in both directions
// (RFC 9110 7.6.1; RFC 9112 7.4 for TE; Proxy-* are for this proxy only;
// Trailer is kept when the message carries trailers, see Go's
// httputil.ReverseProxy, whose list this follows).
var hopHeaders = []string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Transfer-Encoding", "Upgrade",
}

// removeHopHeaders removes from h every field named in its Connection
// header and the hop-by-hop fields. When upgrade is true (an HTTP/1.1
// upgrade, e.g. a WebSocket handshake: RFC 9110 7.8) Connection: Upgrade
// and Upgrade are kept, since they are the handshake itself.
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
	for _, name := range hopHeaders {
		if upgrade && (name == "Connection" || name == "Upgrade") {
			continue
		}
		delete(h, name) // canonical already: no need for Del's canonicalisation
	}
	if upgrade {
		h.Set("Connection", "Upgrade")
	}
	if trailers {
		h.Set("Te", "trailers") // RFC 9110 10.1.4: asks for trailers end to end
	}
}

// isUpgrade reports whether h asks for (or a 101 response grants) a
// protocol upgrade: Connection names Upgrade and Upgrade is set.
func isUpgrade(h http.Header) bool {
	return h.Get("Upgrade") != "" && httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade")
}

// prepareOutbound readies an allowed request for the origin: hop-by-hop
// fields go, and a request sent with no User-Agent is forwarded with none
// (Go's transport would add "Go-http-client/1.1"; an empty value makes it
// send none).
func prepareOutbound(r *http.Request) {
	removeHopHeaders(r.Header, isUpgrade(r.Header))
	if _, ok := r.Header["User-Agent"]; !ok {
		r.Header["User-Agent"] = []string{""}
	}
}

// prepareInbound readies an origin's response for the client: hop-by-hop
// fields go, except the handshake fields of a 101 Switching Protocols.
func prepareInbound(resp *http.Response) {
	removeHopHeaders(resp.Header, resp.StatusCode == http.StatusSwitchingProtocols && isUpgrade(resp.Header))
}
