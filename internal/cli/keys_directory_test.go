package cli

import (
	"bytes"
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// TestKeysDirectoryAuthority: identities whose signature_agent URLs name
// two hosts need -authority, which must be one of those hosts or of
// signing.directory_authorities; the headers then sign for it.
func TestKeysDirectoryAuthority(t *testing.T) {
	dir := t.TempDir()
	var keys []string
	for _, name := range []string{"a", "b"} {
		if _, err := signing.GenerateKeyDir(filepath.Join(dir, name), rand.Reader); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, filepath.Join(dir, name))
	}
	cfg := filepath.Join(dir, "config.yaml")
	yaml := "signing:\n  directory_authorities: [keys.example]\n  identities:\n" +
		"    - product_token: ExampleBot\n      keys: [" + keys[0] + "]\n      signature_agent: https://a.example\n" +
		"    - default: true\n      keys: [" + keys[1] + "]\n      signature_agent: https://b.example\n"
	if err := os.WriteFile(cfg, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "site")
	for _, tt := range []struct {
		args []string
		code int
		want string // in stdout or stderr
	}{
		{[]string{"keys", "directory", "-config", cfg, "-o", out}, 2, "give -authority HOST"},
		{[]string{"keys", "directory", "-config", cfg, "-o", out, "-authority", "keys.example"}, 0, "2 keys; serve " + out + " at https://keys.example/.well-known/http-message-signatures-directory"},
		{[]string{"keys", "directory", "-config", cfg, "-o", out, "-authority", "mirror.attacker.test"}, 2,
			`-authority "mirror.attacker.test": the directory is signed only for a.example, b.example, keys.example`},
		{[]string{"keys", "directory", "-config", cfg, "-o", out, "-authority", "a.example:8443"}, 2, "signed only for"},
		{[]string{"keys", "directory", "-config", cfg, "-o", out, "-authority", "https://a.example"}, 2, "signed only for"},
		{[]string{"keys", "directory", "-config", cfg, "-o", out, "-authority", "A.example:443"}, 0, "2 keys; serve " + out + " at https://A.example:443"},
		{[]string{"keys", "directory", "-config", cfg}, 2, "want -o DIR"},
		{[]string{"keys", "directory", "-h"}, 0, "-authority HOST"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != tt.code || !strings.Contains(stdout.String()+stderr.String(), tt.want) {
			t.Errorf("%q: exit %d, want %d and %q; output:\n%s%s", tt.args, code, tt.code, tt.want, &stdout, &stderr)
		}
	}
	card, err := os.ReadFile(filepath.Join(out, ".well-known", "signature-agent-card"))
	if err != nil || !strings.Contains(string(card), `"jwks_uri":"https://b.example/.well-known/http-message-signatures-directory"`) {
		t.Errorf("the first card is the default identity's: %s %v", card, err)
	}
}
