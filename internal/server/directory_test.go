package server

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// startDirectoryServer is startReloadServer with the key directory
// listener opened as Run opens it (listenDirectory).
func startDirectoryServer(t *testing.T, yaml string) (*reloadServer, string) {
	t.Helper()
	rs := &reloadServer{path: filepath.Join(t.TempDir(), "config.yaml"), reload: make(chan os.Signal, 1)}
	rs.write(t, yaml)
	cfg, err := config.LoadFile(rs.path)
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{audit: &testkit.AuditSink{}, log: &testkit.AuditSink{}}
	if ts.s, err = New(cfg, ts.audit, zerolog.New(ts.log)); err != nil {
		t.Fatal(err)
	}
	ts.s.run = RunOptions{Reload: rs.reload, Load: func() (config.Config, error) { return config.LoadFile(rs.path) }}
	if err := ts.s.listenDirectory(); err != nil {
		t.Fatal(err)
	}
	if ts.s.dirLn == nil {
		t.Fatalf("no directory listener; log:\n%s", ts.log.String())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ts.s.serve(ctx, ln, nil) }()
	var once sync.Once
	var serveErr error
	ts.stop = func() error {
		once.Do(func() { cancel(); serveErr = <-done })
		return serveErr
	}
	t.Cleanup(func() { _ = ts.stop() })
	rs.testServer = ts
	return rs, "http://" + ts.s.dirLn.Addr().String()
}

// directoryKids fetches the directory and returns its kids, sorted, and
// the keyids of its signatures, sorted.
// getAs GETs url with Host host (an authority of the directory).
func getAs(url, host string) (*http.Response, error) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		return nil, err
	}
	req.Host = host
	return http.DefaultClient.Do(req)
}

func directoryKids(t *testing.T, base string) (kids, signedBy []string) {
	t.Helper()
	res, err := getAs(base+signing.DirectoryPath, "bot.example")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != signing.DirectoryContentType {
		t.Fatalf("directory: status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	var d struct{ Keys []struct{ Kid string } }
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatal(err)
	}
	for _, k := range d.Keys {
		kids = append(kids, k.Kid)
	}
	for _, m := range strings.Split(res.Header.Get("Signature-Input"), ", ") {
		_, keyid, _ := strings.Cut(m, `keyid="`)
		keyid, _, _ = strings.Cut(keyid, `"`)
		signedBy = append(signedBy, keyid)
	}
	sort.Strings(kids)
	sort.Strings(signedBy)
	return kids, signedBy
}

// TestDirectoryListener: signing.directory_listen serves the signer's
// keys; a reload that adds a key serves it at once; the archive keeps the
// directory of the start and of the reload.
func TestDirectoryListener(t *testing.T) {
	dir := t.TempDir()
	k1, err := signing.GenerateKeyDir(filepath.Join(dir, "k1"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := signing.GenerateKeyDir(filepath.Join(dir, "k2"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(dir, "archive")
	yaml := func(keys string) string {
		return "audit:\n  archive_dir: " + archive + "\nsigning:\n  enabled: true\n  directory_listen: 127.0.0.1:0\n  identities:\n" +
			"    - default: true\n      keys: [" + keys + "]\n      signature_agent: https://bot.example\n" +
			"      card: {name: Example Bot, purpose: search, contact: bots@example.com}\n"
	}
	rs, base := startDirectoryServer(t, yaml(filepath.Join(dir, "k1")))
	kids, signed := directoryKids(t, base)
	if strings.Join(kids, ",") != k1.ID || strings.Join(signed, ",") != k1.ID {
		t.Fatalf("at start: kids %v signed by %v, want %s", kids, signed, k1.ID)
	}
	res, err := getAs(base+signing.CardPath, "bot.example")
	if err != nil {
		t.Fatal(err)
	}
	card, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// The card names the identity, and its keys by the Signature-Agent
	// URL, the origin-only signature_agent made a JWK Set URI.
	if !strings.Contains(string(card), `"client_name":"Example Bot"`) ||
		!strings.Contains(string(card), `"jwks_uri":"https://bot.example/.well-known/http-message-signatures-directory"`) ||
		res.Header.Get("Signature-Input") == "" || !strings.Contains(res.Header.Get("Signature-Input"), k1.ID) {
		t.Errorf("card %s, Signature-Input %q", card, res.Header.Get("Signature-Input"))
	}

	if got := rs.reloadWith(t, yaml(filepath.Join(dir, "k1")+", "+filepath.Join(dir, "k2"))); got != "applied" {
		t.Fatalf("reload %s; log:\n%s", got, rs.logText())
	}
	want := []string{k1.ID, k2.ID}
	sort.Strings(want)
	kids, signed = directoryKids(t, base)
	if strings.Join(kids, ",") != strings.Join(want, ",") || strings.Join(signed, ",") != strings.Join(want, ",") {
		t.Errorf("after the reload: kids %v signed by %v, want %v", kids, signed, want)
	}
	snaps, bad, err := audit.ReadKeySnapshots(archive)
	if err != nil || bad != nil {
		t.Fatal(err, bad)
	}
	if len(snaps) != 2 || snaps[0].Event != "start" || snaps[1].Event != "reload" || !strings.Contains(string(snaps[1].Directory), k2.ID) {
		t.Errorf("archived snapshots: %+v", snaps)
	}
	if res, err := http.Get(base + "/nothing-here"); err == nil {
		res.Body.Close()
	}
	// Another Host: refused, unsigned.
	res, err = getAs(base+signing.DirectoryPath, "mirror.attacker.test")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMisdirectedRequest || res.Header.Get("Signature") != "" {
		t.Errorf("Host mirror.attacker.test: status %d, Signature %q; want 421 unsigned", res.StatusCode, res.Header.Get("Signature"))
	}
	// A reload that names it in signing.directory_authorities serves it.
	both := filepath.Join(dir, "k1") + ", " + filepath.Join(dir, "k2")
	if got := rs.reloadWith(t, strings.Replace(yaml(both), "  identities:\n", "  directory_authorities: [mirror.attacker.test]\n  identities:\n", 1)); got != "applied" {
		t.Fatalf("reload %s; log:\n%s", got, rs.logText())
	}
	if res, err = getAs(base+signing.DirectoryPath, "mirror.attacker.test"); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Signature") == "" {
		t.Errorf("Host mirror.attacker.test after the reload that names it: status %d, Signature %q; want 200 signed", res.StatusCode, res.Header.Get("Signature"))
	}
	for sample, want := range map[string]float64{
		`robotsproxy_key_directory_requests_total{code="200"}`: 4, // directory three times, card once
		`robotsproxy_key_directory_requests_total{code="404"}`: 1,
		`robotsproxy_key_directory_requests_total{code="421"}`: 1,
	} {
		if got := rs.metric(t, sample); got != want {
			t.Errorf("%s = %v, want %v", sample, got, want)
		}
	}
}

// TestDirectoryOff: without signing, no directory is built or archived,
// and directory_listen alone opens nothing.
func TestDirectoryOff(t *testing.T) {
	ts := startServer(t, func(c *config.Config) { c.Signing.DirectoryListen = "127.0.0.1:0" })
	if ts.s.keys != nil {
		t.Fatal("a key directory without signing")
	}
	if err := ts.s.listenDirectory(); err != nil || ts.s.dirLn != nil {
		t.Errorf("listener %v, err %v", ts.s.dirLn, err)
	}
}

func TestCardSlug(t *testing.T) {
	for _, tt := range []struct {
		id   config.SigningIdentity
		want string
	}{
		{config.SigningIdentity{Default: true}, "default"},
		{config.SigningIdentity{ProductToken: "ExampleBot"}, "examplebot"},
		{config.SigningIdentity{User: "Crawler 1"}, "user-crawler-1"},
		{config.SigningIdentity{ClientRange: "10.0.0.0/8"}, "range-10.0.0.0-8"},
		{config.SigningIdentity{ClientRange: "2001:db8::/32"}, "range-2001-db8---32"},
	} {
		if got := CardSlug(tt.id); got != tt.want {
			t.Errorf("CardSlug(%+v) = %q, want %q", tt.id, got, tt.want)
		}
	}
}
