package e2e

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// directoryAddr waits for serve's "listening" line of the key directory
// listener and returns its address.
func directoryAddr(t *testing.T, p *proxyProcess) string {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		for _, line := range p.stderr.lines() {
			var l struct{ Message, Listener, Addr string }
			if json.Unmarshal([]byte(line), &l) == nil && l.Message == "listening" && l.Listener == "directory" {
				return l.Addr
			}
		}
	}
	t.Fatalf("no \"listening\" line for the directory listener; stderr:\n%s", p.stderr)
	return ""
}

// getDirectory GETs url from the directory listener with Host host and
// returns the response and its body.
func getDirectory(t *testing.T, url, host string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, body
}

// fetchDirectory returns the kids of the directory served at addr and the
// keyids that signed the response.
func fetchDirectory(t *testing.T, addr string) (kids, signers []string) {
	t.Helper()
	res, body := getDirectory(t, "http://"+addr+signing.DirectoryPath, "crawler.example")
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != signing.DirectoryContentType {
		t.Fatalf("directory: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var d struct{ Keys []struct{ Kid string } }
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	for _, k := range d.Keys {
		kids = append(kids, k.Kid)
	}
	for _, m := range strings.Split(res.Header.Get("Signature-Input"), ", ") {
		_, id, _ := strings.Cut(m, `keyid="`)
		id, _, _ = strings.Cut(id, `"`)
		signers = append(signers, id)
	}
	return kids, signers
}

// TestDirectoryAuditVerify runs serve with signing, an archive and the
// key directory listener: the directory serves the keys and, after a
// reload that adds a key, both; audit verify passes the genuine log with
// every signature_keyid checked against the archived directories, and
// fails a line appended with a keyid that was never published.
func TestDirectoryAuditVerify(t *testing.T) {
	dir := t.TempDir()
	o := newSigningOrigin(t)
	var ids []string
	for _, name := range []string{"k1", "k2"} {
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
	archive, logPath := filepath.Join(dir, "archive"), filepath.Join(dir, "audit.log")
	conf := func(keys, active string) string {
		return fmt.Sprintf("log:\n  file: %s\naudit:\n  chain: true\n  archive_dir: %s\nsigning:\n  enabled: true\n  directory_listen: 127.0.0.1:0\n"+
			"  identities:\n    - default: true\n      keys: [%s]\n      active: %s\n      signature_agent: https://crawler.example\n",
			logPath, archive, keys, filepath.Join(dir, active))
	}
	rp := startReloadable(t, conf(filepath.Join(dir, "k1"), "k1"))
	dirAddr := directoryAddr(t, rp.proxyProcess)
	if kids, signers := fetchDirectory(t, dirAddr); fmt.Sprint(kids) != fmt.Sprint(ids[:1]) || fmt.Sprint(signers) != fmt.Sprint(ids[:1]) {
		t.Fatalf("directory at start: kids %v signed by %v, want %v", kids, signers, ids[:1])
	}
	proxyURL, _ := url.Parse("http://" + rp.proxyAddr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}, Timeout: 20 * time.Second}
	send := func(path string) {
		t.Helper()
		req, _ := http.NewRequest("GET", o.URL+path, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	send("/a")
	both := filepath.Join(dir, "k1") + ", " + filepath.Join(dir, "k2")
	if out, _ := rp.reload(t, conf(both, "k2")); out["message"] != "configuration reloaded" {
		t.Fatalf("reload: %v", out)
	}
	if kids, signers := fetchDirectory(t, dirAddr); len(kids) != 2 || len(signers) != 2 {
		t.Errorf("directory after the reload: kids %v signed by %v, want both keys", kids, signers)
	}
	send("/b")
	if o.outcome("/a") != ids[0] || o.outcome("/b") != ids[1] {
		t.Fatalf("origin saw /a %q, /b %q", o.outcome("/a"), o.outcome("/b"))
	}
	rp.stop(t)

	stdout, stderr, code := runBinary(t, "", "audit", "verify", "-archive", archive, logPath)
	if code != 0 || !strings.Contains(stdout, "signatures   2 signed lines: 2 by a key of the archived directory, 0 not") {
		t.Fatalf("audit verify of the genuine log: exit %d\n%s%s", code, stdout, stderr)
	}

	// A line appended, chained, with a keyid the proxy never published.
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSuffix(string(raw), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasSuffix(last, "\n") {
		last += "\n"
	}
	pub, _, _ := ed25519.GenerateKey(rand.Reader)
	forged := strings.Replace(last, ids[1], signing.Thumbprint(pub), 1)
	if forged == last {
		t.Fatalf("no signature_keyid %s in the last line %s", ids[1], last)
	}
	stripped := forged[:len(forged)-len(`,"prev":"`)-64-3] + "}\n"
	prev := sha256.Sum256([]byte(last))
	forgedLog := filepath.Join(dir, "forged.log")
	writeLines(t, forgedLog, []string{string(raw), string(audit.AppendPrev(nil, []byte(stripped), prev))})
	stdout, stderr, code = runBinary(t, "", "audit", "verify", "-archive", archive, forgedLog)
	want := fmt.Sprintf("%s:%d: signature: signature_keyid %s is in no key directory", forgedLog, len(lines)+1, signing.Thumbprint(pub))
	if code != 1 || !strings.Contains(stdout, want) || !strings.Contains(stdout, "result       FAIL") {
		t.Errorf("audit verify with a forged keyid: exit %d, want 1 and %q\n%s%s", code, want, stdout, stderr)
	}
}

// TestKeysDirectory runs "robotsproxy keys directory": the static files
// and their headers, and the refusals.
func TestKeysDirectory(t *testing.T) {
	dir := t.TempDir()
	if _, stderr, code := runBinary(t, "", "keys", "init", filepath.Join(dir, "k1")); code != 0 {
		t.Fatalf("keys init: %s", stderr)
	}
	k, err := signing.LoadKeyDir(filepath.Join(dir, "k1"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	writeLines(t, cfg, []string{"signing:\n  identities:\n    - product_token: ExampleBot\n      keys: [" + filepath.Join(dir, "k1") +
		"]\n      signature_agent: https://bot.example\n      card: {name: Example Bot, contact: bots@example.com}\n"})
	out := filepath.Join(dir, "site")
	stdout, stderr, code := runBinary(t, "", "keys", "directory", "-config", cfg, "-o", out)
	if code != 0 {
		t.Fatalf("keys directory: exit %d\n%s%s", code, stdout, stderr)
	}
	body, err := os.ReadFile(filepath.Join(out, ".well-known", "http-message-signatures-directory"))
	if err != nil || !strings.Contains(string(body), `"kid":"`+k.ID+`"`) {
		t.Errorf("directory file: %s %v", body, err)
	}
	headers, err := os.ReadFile(filepath.Join(out, ".well-known", "http-message-signatures-directory.headers"))
	if err != nil || !strings.Contains(string(headers), "Content-Type: application/http-message-signatures-directory+json\n") ||
		!strings.Contains(string(headers), `keyid="`+k.ID+`";tag="http-message-signatures-directory"`) {
		t.Errorf("headers file: %s %v", headers, err)
	}
	card, err := os.ReadFile(filepath.Join(out, ".well-known", "signature-agent-cards", "examplebot.json"))
	if err != nil || !strings.Contains(string(card), `"rfc9309-product-token":"ExampleBot"`) {
		t.Errorf("card: %s %v", card, err)
	}
	for _, args := range [][]string{
		{"keys", "directory", "-config", cfg},
		{"keys", "directory", "-config", filepath.Join(dir, "missing.yaml"), "-o", out},
		{"keys", "directory", "-config", cfg, "-o", out, "-valid", "-1h"},
	} {
		if _, _, code := runBinary(t, "", args...); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
}
