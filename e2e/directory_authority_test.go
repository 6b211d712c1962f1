package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yaronf/httpsign"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// TestDirectoryAuthorities runs serve with a key directory listener: the
// directory and the cards are signed for the signature_agent host and
// for signing.directory_authorities, and verify there (httpsign); any
// other Host, such as a mirror's, gets 421 with no signature. keys
// directory -authority refuses a host the directory does not vouch for.
func TestDirectoryAuthorities(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runBinary(t, "", "keys", "init", filepath.Join(dir, "k1")); code != 0 {
		t.Fatalf("keys init: %s", stderr)
	}
	k, err := signing.LoadKeyDir(filepath.Join(dir, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf("signing:\n  enabled: true\n  directory_listen: 127.0.0.1:0\n  directory_authorities: [keys.example:8443]\n"+
		"  identities:\n    - default: true\n      keys: [%s]\n      signature_agent: https://crawler.example\n", filepath.Join(dir, "k1"))
	p := startProxy(t, conf)
	addr := directoryAddr(t, p)
	for _, tt := range []struct {
		host   string
		status int
		signed string // the @authority signed: the Host in lower case
	}{
		{"crawler.example", 200, "crawler.example"},
		{"Crawler.Example:443", 200, "crawler.example:443"}, // from a TLS terminator that keeps the port
		{"keys.example:8443", 200, "keys.example:8443"},
		{"mirror.attacker.test", 421, ""},
		{"keys.example", 421, ""},
		{addr, 421, ""},
	} {
		for _, path := range []string{signing.DirectoryPath, signing.CardPath, signing.CardsPrefix + "default.json"} {
			res, _ := getDirectory(t, "http://"+addr+path, tt.host)
			if res.StatusCode != tt.status {
				t.Errorf("Host %q %s: status %d, want %d", tt.host, path, res.StatusCode, tt.status)
				continue
			}
			if tt.status != 200 {
				if res.Header.Get("Signature") != "" || res.Header.Get("Signature-Input") != "" {
					t.Errorf("Host %q %s: a refusal is signed: %v", tt.host, path, res.Header)
				}
				continue
			}
			if err := verifyDirectory(k, res, tt.signed); err != nil {
				t.Errorf("Host %q %s: %v", tt.host, path, err)
			}
			if err := verifyDirectory(k, res, "mirror.attacker.test"); err == nil {
				t.Errorf("Host %q %s: the signature verifies for mirror.attacker.test too", tt.host, path)
			}
		}
	}
	cfg := filepath.Join(dir, "config.yaml")
	writeLines(t, cfg, []string{conf})
	stdout, stderr, code := runBinary(t, "", "keys", "directory", "-config", cfg, "-o", filepath.Join(dir, "site"), "-authority", "mirror.attacker.test")
	if code != 2 || !strings.Contains(stderr, "signed only for crawler.example, keys.example:8443") {
		t.Errorf("keys directory -authority mirror.attacker.test: exit %d, want 2\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := runBinary(t, "", "keys", "directory", "-config", cfg, "-o", filepath.Join(dir, "site"), "-authority", "keys.example:8443"); code != 0 {
		t.Errorf("keys directory -authority keys.example:8443: exit %d\n%s", code, stderr)
	}
}

// verifyDirectory verifies sig1 of a directory or card response with
// httpsign, as a verifier that asked host would.
func verifyDirectory(k *signing.Key, res *http.Response, host string) error {
	fields := httpsign.NewFields().AddHeaderExt("@authority", false, false, true, false).AddHeader("content-digest")
	v, err := httpsign.NewEd25519Verifier(k.Public, httpsign.NewVerifyConfig().SetKeyID(k.ID).
		SetAllowedTags([]string{signing.DirectoryTag}), *fields)
	if err != nil {
		return err
	}
	req := &http.Request{Method: "GET", Host: host, URL: &url.URL{Path: signing.DirectoryPath}, Header: http.Header{}}
	return httpsign.VerifyResponse("sig1", *v, res, req)
}
