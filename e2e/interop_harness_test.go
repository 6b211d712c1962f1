package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestInteropHarness proves the interop origins before they judge the
// proxy: signatures made by the libraries' own signers (e2e/interop/
// sign.mjs) are accepted by both verifiers, and both reject a replayed
// nonce, a tampered path, an unknown or wrong key and an expired
// signature. It also pins what web-bot-auth 0.1.3 does with the RFC 9421
// Dictionary member form of Signature-Agent without the origin's adapter:
// it rejects it (see docs/interop.md); when a release fixes that, this
// case fails and the adapter can go.
func TestInteropHarness(t *testing.T) {
	dir := interopDir(t)
	priv, pub := writeEd25519(t, t.TempDir())
	_, otherPub := writeEd25519(t, t.TempDir())

	for _, signer := range []string{"web-bot-auth", "http-message-signatures"} {
		for _, script := range verifierScripts {
			t.Run(signer+"-signed/"+script, func(t *testing.T) {
				good := startNodeOrigin(t, dir, script, "--key", pub)
				wrong := startNodeOrigin(t, dir, script, "--key", otherPub)
				wrongIgnoringKeyid := startNodeOrigin(t, dir, script, "--key", otherPub, "--ignore-keyid")
				page := good.base() + "/page"

				h := nodeSign(t, dir, signer, priv, "GET", page, 60)
				if v := sendDirect(t, nil, "GET", page, h, ""); !v.OK || v.Tag != "web-bot-auth" {
					t.Fatalf("a %s signature: got %v, want accepted with tag web-bot-auth", signer, v)
				}
				rejects(t, "the same request again (replayed nonce)", sendDirect(t, nil, "GET", page, h, ""), "nonce replayed")

				h = nodeSign(t, dir, signer, priv, "GET", page, 60)
				rejects(t, "the signature for /page sent for /other", sendDirect(t, nil, "GET", good.base()+"/other", h, ""), "invalid signature")

				h = nodeSign(t, dir, signer, priv, "GET", wrong.base()+"/page", 60)
				rejects(t, "an origin that knows another key", sendDirect(t, nil, "GET", wrong.base()+"/page", h, ""), "keyid")
				h = nodeSign(t, dir, signer, priv, "GET", wrongIgnoringKeyid.base()+"/page", 60)
				rejects(t, "an origin that verifies with another key", sendDirect(t, nil, "GET", wrongIgnoringKeyid.base()+"/page", h, ""), "invalid signature")

				h = nodeSign(t, dir, signer, priv, "GET", page, 1)
				waitPast(h)
				rejects(t, "an expired signature", sendDirect(t, nil, "GET", page, h, ""), "expired")
			})
		}
	}

	t.Run("web-bot-auth-0.1.3-without-adapter", func(t *testing.T) {
		raw := startNodeOrigin(t, dir, "origin-web-bot-auth.mjs", "--key", pub, "--raw")
		h := nodeSign(t, dir, "http-message-signatures", priv, "GET", raw.base()+"/page", 60)
		rejects(t, `an RFC 9421 "signature-agent";key= signature, web-bot-auth without the adapter`,
			sendDirect(t, nil, "GET", raw.base()+"/page", h, ""), "invalid signature")
		h = nodeSign(t, dir, "web-bot-auth", priv, "GET", raw.base()+"/page", 60)
		if v := sendDirect(t, nil, "GET", raw.base()+"/page", h, ""); !v.OK {
			t.Errorf("web-bot-auth's own signature, without the adapter: got %v, want accepted", v)
		}
	})
}

// rejects checks that v is a rejection of a signed request whose error
// contains want (any error when want is "").
func rejects(t *testing.T, what string, v verdict, want string) {
	t.Helper()
	if v.OK || !strings.Contains(strings.ToLower(v.Error), want) || strings.Contains(v.Error, "request is not signed") {
		t.Errorf("%s: got %v, want rejected (%q)", what, v, want)
	}
}

// waitPast sleeps until the Unix second after the expires parameter of
// the signature in h (with one more second for the verifiers' rounding).
func waitPast(h http.Header) {
	in := h.Get("Signature-Input")
	i := strings.Index(in, ";expires=")
	if i < 0 {
		return
	}
	var exp int64
	for _, c := range in[i+len(";expires="):] {
		if c < '0' || c > '9' {
			break
		}
		exp = exp*10 + int64(c-'0')
	}
	time.Sleep(time.Until(time.Unix(exp+2, 0)))
}
