package signing_test

import (
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// TestJWKSURL: the Signature-Agent member is a JWK Set URI
// (draft-ietf-webbotauth-httpsig-protocol-01 section 5.5): an origin
// alone stands for its well-known key directory; a URL with a path or
// query is the operator's JWK Set URI, sent as configured.
func TestJWKSURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://crawler.example":                         "https://crawler.example/.well-known/http-message-signatures-directory",
		"https://crawler.example/":                        "https://crawler.example/.well-known/http-message-signatures-directory",
		"https://crawler.example:8443":                    "https://crawler.example:8443/.well-known/http-message-signatures-directory",
		"https://crawler.example/keys.json":               "https://crawler.example/keys.json",
		"https://crawler.example/?v=2":                    "https://crawler.example/?v=2",
		"https://crawler.example" + signing.DirectoryPath: "https://crawler.example" + signing.DirectoryPath,
	} {
		if got := signing.JWKSURL(in); got != want {
			t.Errorf("JWKSURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestContactURI: a card's contacts are URIs (registry-04).
func TestContactURI(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"bots@example.com":          "mailto:bots@example.com",
		"Bots <bots@example.com>":   "mailto:bots@example.com",
		"mailto:bots@example.com":   "mailto:bots@example.com",
		"https://example.com/about": "https://example.com/about",
	} {
		if got := (signing.Card{Contact: in}).ContactURI(); got != want {
			t.Errorf("ContactURI(%q) = %q, want %q", in, got, want)
		}
	}
}
