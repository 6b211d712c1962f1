package e2e

import (
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yaronf/httpsign"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// TestKeysInit runs "robotsproxy keys init DIR": it writes the pair, the
// private key 0600, prints the keyid, and refuses to overwrite.
func TestKeysInit(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "key")
	stdout, stderr, code := runBinary(t, "", "keys", "init", dir)
	if code != 0 {
		t.Fatalf("keys init: exit %d; stderr:\n%s", code, stderr)
	}
	k, err := signing.LoadKeyDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "keyid (JWK SHA-256 thumbprint): "+k.ID+"\n") || strings.Contains(stdout, "PRIVATE") {
		t.Errorf("keys init: stdout %q, want the keyid %s and no key", stdout, k.ID)
	}
	if fi, err := os.Stat(filepath.Join(dir, signing.PrivateKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("private key file: %v %v, want mode 0600", fi.Mode(), err)
	}
	// Valid for a year from now by default; -valid 0 bounds nothing.
	if d := time.Until(k.NotAfter); k.NotBefore.After(time.Now()) || d < 364*24*time.Hour || d > 366*24*time.Hour {
		t.Errorf("keys init: validity %v..%v, want now..a year from now", k.NotBefore, k.NotAfter)
	}
	unbounded := filepath.Join(t.TempDir(), "unbounded")
	if _, stderr, code := runBinary(t, "", "keys", "init", "-valid", "0", unbounded); code != 0 {
		t.Fatalf("keys init -valid 0: exit %d: %s", code, stderr)
	}
	if u, err := signing.LoadKeyDir(unbounded); err != nil || !u.NotBefore.IsZero() || !u.NotAfter.IsZero() {
		t.Errorf("keys init -valid 0: %v, validity %v..%v, want none", err, u.NotBefore, u.NotAfter)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys", "init", dir}, "not overwritten"},
		{[]string{"keys", "init"}, "want one DIR"},
		{[]string{"keys", "init", "a", "b"}, "want one DIR"},
		{[]string{"keys"}, "keys init DIR"},
		{[]string{"keys", "rotate"}, "keys init DIR"},
		{[]string{"keys", "init", "-valid", "-1h", dir + "x"}, "want 0 or a positive duration"},
	} {
		if _, stderr, code := runBinary(t, "", tc.args...); code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	again, _ := signing.LoadKeyDir(dir)
	if again.ID != k.ID {
		t.Error("a refused keys init changed the key")
	}
	if stdout, _, code := runBinary(t, "", "help"); code != 0 || !strings.Contains(stdout, "keys init") {
		t.Errorf("help does not list keys init: %q", stdout)
	}
}

// signingOrigin is an origin that verifies every request's signature
// (with httpsign's verifier, against the keys it is told) and remembers
// the outcome per path.
type signingOrigin struct {
	*httptest.Server
	mu   sync.Mutex
	keys map[string]ed25519.PublicKey // keyid -> key
	seen map[string]string            // path -> "keyid" or "unsigned" or "bad: ..."
}

func newSigningOrigin(t *testing.T) *signingOrigin {
	o := &signingOrigin{keys: map[string]ed25519.PublicKey{}, seen: map[string]string{}}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		o.mu.Lock()
		o.seen[r.URL.Path] = o.verify(r)
		o.mu.Unlock()
		io.WriteString(w, "ok")
	}))
	t.Cleanup(o.Close)
	return o
}

// verify returns the keyid that signed r, "unsigned" or "bad: why".
func (o *signingOrigin) verify(r *http.Request) string {
	if r.Header.Get("Signature") == "" {
		return "unsigned"
	}
	details, err := httpsign.RequestDetails("robotsproxy", r)
	if err != nil || details.KeyID == nil {
		return fmt.Sprintf("bad: details %v", err)
	}
	pub, ok := o.keys[*details.KeyID]
	if !ok {
		return "bad: unknown keyid " + *details.KeyID
	}
	fields := httpsign.Headers("@authority", "@method", "@path")
	fields.AddDictHeader("signature-agent", "robotsproxy")
	if r.ContentLength > 0 {
		fields.AddHeader("content-digest")
		if err := httpsign.ValidateContentDigestHeader(r.Header.Values("Content-Digest"), &r.Body, []string{httpsign.DigestSha256}); err != nil {
			return "bad: digest " + err.Error()
		}
	}
	v, err := httpsign.NewEd25519Verifier(pub, httpsign.NewVerifyConfig().SetAllowedTags([]string{"web-bot-auth"}), fields)
	if err != nil {
		return "bad: " + err.Error()
	}
	if err := httpsign.VerifyRequest("robotsproxy", *v, r); err != nil {
		return "bad: " + err.Error()
	}
	// signature_agent https://crawler.example, sent as the JWK Set URI
	// verifiers fetch (draft-ietf-webbotauth-httpsig-protocol-01 5.5).
	if got := r.Header.Get("Signature-Agent"); got != `robotsproxy="https://crawler.example/.well-known/http-message-signatures-directory"` {
		return "bad: Signature-Agent " + got
	}
	return *details.KeyID
}

func (o *signingOrigin) outcome(path string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.seen[path]
}

// TestServeSigns runs serve with signing on: requests through the binary
// arrive signed (GET and a POST with its Content-Digest), the audit line
// names the keyid and created time; a reload that makes another key
// active signs the next requests with it.
func TestServeSigns(t *testing.T) {
	dir := t.TempDir()
	o := newSigningOrigin(t)
	var ids []string
	for _, name := range []string{"old", "new"} {
		if _, stderr, code := runBinary(t, "", "keys", "init", filepath.Join(dir, name)); code != 0 {
			t.Fatalf("keys init: %s", stderr)
		}
		k, err := signing.LoadKeyDir(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		o.keys[k.ID] = k.Public
		ids = append(ids, k.ID)
	}
	conf := func(active string) string {
		return fmt.Sprintf("signing:\n  enabled: true\n  identities:\n    - default: true\n      keys: [%s, %s]\n      active: %s\n      signature_agent: https://crawler.example\n",
			filepath.Join(dir, "old"), filepath.Join(dir, "new"), filepath.Join(dir, active))
	}
	rp := startReloadable(t, conf("old"))
	proxyURL, _ := url.Parse("http://" + rp.proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 20 * time.Second}
	send := func(method, path, body string) {
		t.Helper()
		req, _ := http.NewRequest(method, o.URL+path, strings.NewReader(body))
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
	}
	before := time.Now().Unix()
	send("GET", "/a?q=1", "")
	send("POST", "/form", "a=1&b=2")
	if out, _ := rp.reload(t, conf("new")); out["message"] != "configuration reloaded" {
		t.Fatalf("reload: %v", out)
	}
	send("GET", "/b", "")
	for path, want := range map[string]string{"/a": ids[0], "/form": ids[0], "/b": ids[1]} {
		if got := o.outcome(path); got != want {
			t.Errorf("%s: origin saw %q, want signed by %s", path, got, want)
		}
	}
	lines := rp.auditLines(t, 3)
	for i, want := range ids[:1] {
		l := lines[i]
		created, _ := l["signature_created"].(float64)
		if l["signature_keyid"] != want || int64(created) < before || int64(created) > time.Now().Unix() {
			t.Errorf("audit line %d: signature_keyid %v, signature_created %v; want %s, about now", i, l["signature_keyid"], l["signature_created"], want)
		}
	}
	if l := lines[2]; l["signature_keyid"] != ids[1] {
		t.Errorf("audit line after the reload: signature_keyid %v, want %s", l["signature_keyid"], ids[1])
	}
	// A broken key refuses the reload and keeps the running keys.
	os.WriteFile(filepath.Join(dir, "old", signing.PublicKeyFile), []byte("garbage\n"), 0o644)
	if out, _ := rp.reload(t, conf("new")); out["message"] == "configuration reloaded" || !strings.Contains(fmt.Sprint(out["error"]), "signing.identities[0].keys[0]") {
		t.Errorf("reload with a broken key: %v, want a refusal naming signing.identities[0].keys[0]", out)
	}
	send("GET", "/c", "")
	if got := o.outcome("/c"); got != ids[1] {
		t.Errorf("/c after the refused reload: %q, want signed by %s", got, ids[1])
	}
}

// TestServeSigningOff: by default nothing is signed and the audit line has
// no signature field.
func TestServeSigningOff(t *testing.T) {
	o := newSigningOrigin(t)
	p := startProxy(t, "mode: enforce\n")
	proxyURL, _ := url.Parse("http://" + p.proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 20 * time.Second}
	resp, err := client.Get(o.URL + "/plain")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := o.outcome("/plain"); got != "unsigned" {
		t.Errorf("origin saw %q, want unsigned", got)
	}
	l := p.auditLines(t, 1)[0]
	for _, f := range []string{"signature_keyid", "signature_created"} {
		if _, ok := l[f]; ok {
			t.Errorf("audit line has %s with signing off: %v", f, l)
		}
	}
}

// TestServeSigningBrokenKey: a key that cannot be read stops serve at
// start with exit 2, naming the key.
func TestServeSigningBrokenKey(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if _, stderr, code := runBinary(t, "", "keys", "init", open); code != 0 {
		t.Fatalf("keys init: %s", stderr)
	}
	if err := os.Chmod(filepath.Join(open, signing.PrivateKeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ key, want string }{
		{filepath.Join(dir, "missing"), "holds neither"},
		{open, "chmod 600"},
	} {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		body := fmt.Sprintf("signing:\n  enabled: true\n  identities:\n    - default: true\n      keys: [%s]\n      signature_agent: https://crawler.example\n", tc.key)
		if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runBinary(t, "", "serve", "-config", cfg, "-listen", "127.0.0.1:0", "-admin-listen", "127.0.0.1:0")
		if code != 2 || !strings.Contains(stderr, "signing.identities[0].keys[0]") || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve with key %s: exit %d, stderr %q; want 2 naming signing.identities[0].keys[0] and %q", tc.key, code, stderr, tc.want)
		}
	}
}
