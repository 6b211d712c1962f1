package signing

import (
	"crypto/ed25519"
	"encoding/base64"
	"testing"
	"time"
)

// The test key of RFC 9421 appendix B.1.4 (Ed25519), which the test
// vectors of draft-ietf-webbotauth-httpsig-protocol-01 use. A test key:
// the draft forbids it in production.
const (
	rfc9421TestSeed = "n4Ni-HpISpVObnQMW0wOhCKROaIKqKtW_2ZYb2p9KcU" // d
	rfc9421TestX    = "JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs"
)

// TestDirectoryVector reproduces the signed directory response of
// draft-ietf-webbotauth-httpsig-protocol-01 appendix E.2.3 byte for byte:
// the keyid (RFC 7638 thumbprint), the Content-Digest of the JWKS, and
// the Signature-Input and Signature under the label "binding" for
// authority signature-agent.test.
func TestDirectoryVector(t *testing.T) {
	seed, err := base64.RawURLEncoding.DecodeString(rfc9421TestSeed)
	if err != nil {
		t.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	if got := base64.RawURLEncoding.EncodeToString(pub); got != rfc9421TestX {
		t.Fatalf("the RFC 9421 B.1.4 seed gives x %s, want %s", got, rfc9421TestX)
	}
	k := &Key{ID: Thumbprint(pub), Public: pub, Private: priv}
	if k.ID != "poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U" {
		t.Errorf("keyid %s, want the draft's poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U", k.ID)
	}
	body := []byte(`{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U","x":"JrQLj5P_89iXES9-vFgrIy29clF9CC_oPPsw3c5D0bs","use":"sig"}]}`)
	digest := contentDigest(body)
	if want := "sha-256=:CADMT2aBdV/rqQr/NIru64ERQkCobVvllA4V0fLFDu0=:"; digest != want {
		t.Errorf("Content-Digest %s, want %s", digest, want)
	}
	created, expires := time.Unix(1735689600, 0), time.Unix(4889289600, 0)
	input, sig := signResponse("binding", k, "signature-agent.test", digest, created, expires.Sub(created))
	wantInput := `binding=("@authority";req "content-digest");created=1735689600;expires=4889289600;keyid="poqkLGiymh_W0uP6PZFw-dvez3QJT5SolqXBCW38r0U";tag="http-message-signatures-directory"`
	wantSig := `binding=:l6P8R67tm3kujAxbHWio7ll01qrEZ0dKD/WWlGhNYEmTnFZM8Wt0VQ9zqGfvo7T/UMkBxsigzChM1Gpz7gOVBg==:`
	if input != wantInput {
		t.Errorf("Signature-Input\n%s\nwant\n%s", input, wantInput)
	}
	if sig != wantSig {
		t.Errorf("Signature\n%s\nwant\n%s", sig, wantSig)
	}
}
