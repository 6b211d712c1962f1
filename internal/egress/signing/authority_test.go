package signing_test

import (
	"crypto/ed25519"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// TestDirectoryAuthorities: the directory and the cards are answered and
// signed only for the authorities of the signature_agent URLs and the
// extra ones; any other Host gets 421, unsigned, whatever the path.
func TestDirectoryAuthorities(t *testing.T) {
	k := newKey(t, true, time.Time{}, time.Time{})
	p, err := signing.Publish([]signing.Entry{
		{Slug: "examplebot", SignatureAgent: "https://bot.example/.well-known/http-message-signatures-directory", Keys: []*signing.Key{k}},
		{Slug: "other", SignatureAgent: "https://keys.example:8443", Keys: []*signing.Key{k}},
	}, "Mirror.Example", "[2001:db8::1]:9443")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(signing.NewDirectoryServer(p, signing.DirectoryOptions{}))
	defer srv.Close()
	pubs := map[string]ed25519.PublicKey{k.ID: k.Public}
	for _, tt := range []struct {
		host   string
		status int
		signed string // the authority the signature verifies for
	}{
		{"bot.example", 200, "bot.example"},
		{"BOT.example:443", 200, "bot.example:443"}, // a plain listener behind TLS: host:443 is the https origin
		{"keys.example:8443", 200, "keys.example:8443"},
		{"mirror.example", 200, "mirror.example"},
		{"[2001:db8::1]:9443", 200, "[2001:db8::1]:9443"},
		{"mirror.attacker.test", 421, ""},
		{"bot.example.attacker.test", 421, ""},
		{"keys.example", 421, ""}, // the port is part of the authority
		{"bot.example:8443", 421, ""},
		{"127.0.0.1", 421, ""},
	} {
		for _, path := range []string{signing.DirectoryPath, signing.CardPath, signing.CardsPrefix + "other.json"} {
			res, body := getHost(t, "GET", srv.URL+path, tt.host)
			if res.StatusCode != tt.status {
				t.Errorf("Host %q %s: status %d, want %d", tt.host, path, res.StatusCode, tt.status)
			}
			if tt.status != 200 {
				if res.Header.Get("Signature") != "" || res.Header.Get("Signature-Input") != "" || res.Header.Get("Content-Digest") != "" {
					t.Errorf("Host %q %s: a refusal carries signature fields: %v", tt.host, path, res.Header)
				}
				continue
			}
			if got := checkSignatures(t, res.Header, body, tt.signed, pubs); len(got) != 1 {
				t.Errorf("Host %q %s: signatures verified for %q: %v", tt.host, path, tt.signed, got)
			}
		}
	}
	if _, err := p.Headers("mirror.attacker.test", time.Now(), time.Hour); !errors.Is(err, signing.ErrAuthority) {
		t.Errorf("Headers for another authority: %v, want ErrAuthority", err)
	}
	if _, err := p.WriteStatic(t.TempDir(), "mirror.attacker.test", time.Now(), time.Hour); !errors.Is(err, signing.ErrAuthority) {
		t.Errorf("WriteStatic for another authority: %v, want ErrAuthority", err)
	}
}

// TestCheckAuthority: what signing.directory_authorities and
// keys directory -authority accept.
func TestCheckAuthority(t *testing.T) {
	for s, ok := range map[string]bool{
		"crawler.example": true, "crawler.example:8443": true, "[2001:db8::1]": true, "[2001:db8::1]:443": true, "192.0.2.1": true,
		"": false, "https://crawler.example": false, "crawler.example/": false, "crawler.example/x": false, "user@crawler.example": false,
		"crawler.example:": false, "crawler.example?x": false, "crawler.example#x": false, "crawler example": false, ":443": false,
	} {
		if err := signing.CheckAuthority(s); (err == nil) != ok {
			t.Errorf("CheckAuthority(%q) = %v, want ok %v", s, err, ok)
		}
	}
	if _, err := signing.Publish(nil, "https://x.example"); err == nil {
		t.Error("Publish with the extra authority https://x.example: no error")
	}
}
