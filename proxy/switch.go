package proxy

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// One rule for protocol switches (RFC 9110 7.8): the proxy relays raw
// octets in place of requests only after a WebSocket handshake (RFC 6455
// 4) that it let through, answered with 101 Switching Protocols,
// "Upgrade: websocket" and the Sec-WebSocket-Accept the request's key
// asks for. Every other upgrade is refused: a request's Upgrade field
// that does not ask for WebSocket is not forwarded (it is hop-by-hop, so
// h2c, which RFC 9113 3.1 deprecates, and TLS upgrades never reach the
// origin), and any other 101 from an origin is answered 502 and its
// connection closed. Until a WebSocket switch, whatever the client sends
// is read as requests by the HTTP server, with every client limit in
// force.

// websocketGUID is the value RFC 6455 1.3 appends to Sec-WebSocket-Key.
const websocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// isWebSocketUpgrade reports whether h asks for (or a 101 response
// grants) a switch to WebSocket and to nothing else: Connection names
// Upgrade, and Upgrade is "websocket" (RFC 6455 4.1, 4.2.2).
func isWebSocketUpgrade(h http.Header) bool {
	up := h["Upgrade"]
	return len(up) == 1 && strings.EqualFold(strings.TrimSpace(up[0]), "websocket") &&
		httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade")
}

// webSocketAccept is the Sec-WebSocket-Accept that answers key (RFC 6455
// 4.2.2 item 5.4): base64 of the SHA-1 of the key and websocketGUID.
func webSocketAccept(key string) string {
	sum := sha1.Sum([]byte(key + websocketGUID))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// switchError says why resp, a 101 answer to req, is not relayed: nil when
// it completes the WebSocket handshake req asked for (both sides name
// WebSocket alone, and Sec-WebSocket-Accept answers req's
// Sec-WebSocket-Key), the protocol switch the proxy relays.
func switchError(req *http.Request, resp *http.Response) error {
	switch {
	case !isWebSocketUpgrade(req.Header):
		return fmt.Errorf("the origin answered 101 Switching Protocols (Upgrade %q) to a request that asked for no WebSocket handshake: not relayed", resp.Header.Get("Upgrade"))
	case !isWebSocketUpgrade(resp.Header):
		return fmt.Errorf("the origin answered a WebSocket handshake with 101 Switching Protocols to Upgrade %q: not relayed", resp.Header.Get("Upgrade"))
	case req.Header.Get("Sec-WebSocket-Key") == "" ||
		resp.Header.Get("Sec-WebSocket-Accept") != webSocketAccept(req.Header.Get("Sec-WebSocket-Key")):
		return fmt.Errorf("the origin's 101 Switching Protocols has no valid Sec-WebSocket-Accept for the request's Sec-WebSocket-Key (RFC 6455 4.2.2): not relayed")
	}
	return nil
}

// refuseSwitch returns the answer to req when resp, the origin's answer,
// switches protocols other than by a WebSocket handshake (see
// switchError): the origin's connection is closed and the client gets
// 502, with the reason in the audit line's error field. It returns resp
// itself for any other answer.
func refuseSwitch(req *http.Request, resp *http.Response, st *state) *http.Response {
	if resp == nil || resp.StatusCode != http.StatusSwitchingProtocols {
		return resp
	}
	sent := req
	if resp.Request != nil {
		sent = resp.Request // what the origin was sent
	}
	err := switchError(sent, resp)
	if err == nil {
		return resp
	}
	if resp.Body != nil {
		_ = resp.Body.Close() // the origin's connection
	}
	return upstreamErrorResponse(req, err, st)
}
