package proxy_test

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/yaronf/httpsign"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// verifyingOrigin wraps an origin: each request's signature (label
// "robotsproxy") is verified with httpsign against key and the outcome
// kept per path: the keyid, "unsigned" or "bad: ...".
type verifyingOrigin struct {
	*origin
	key  *signing.Key
	mu   sync.Mutex
	seen map[string]string
}

func newVerifyingOrigin(t *testing.T, tls bool, key *signing.Key) *verifyingOrigin {
	t.Helper()
	v := &verifyingOrigin{origin: &origin{}, key: key, seen: map[string]string{}}
	inner := v.origin.handler(serveRobots("User-agent: *\nAllow: /\n"))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			v.mu.Lock()
			v.seen[r.URL.Path] = v.verify(r)
			v.mu.Unlock()
		}
		inner.ServeHTTP(w, r)
	})
	if tls {
		v.origin.Server = httptest.NewTLSServer(h)
	} else {
		v.origin.Server = httptest.NewServer(h)
	}
	t.Cleanup(v.origin.Close)
	return v
}

func (v *verifyingOrigin) verify(r *http.Request) string {
	if r.Header.Get("Signature") == "" && r.Header.Get("Signature-Agent") == "" {
		return "unsigned"
	}
	fields := httpsign.Headers("@authority", "@method", "@path")
	fields.AddDictHeader("signature-agent", "robotsproxy")
	cfg := httpsign.NewVerifyConfig().SetAllowedTags([]string{signing.Tag}).SetKeyID(v.key.ID)
	ver, err := httpsign.NewEd25519Verifier(v.key.Public, cfg, fields)
	if err != nil {
		return "bad: " + err.Error()
	}
	if err := httpsign.VerifyRequest("robotsproxy", *ver, r); err != nil {
		return "bad: " + err.Error()
	}
	return v.key.ID
}

func (v *verifyingOrigin) outcome(path string) string {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.seen[path]
}

// signingStep returns an egress option that signs requests decided for
// ExampleBot with a new key, and the key.
func signingStep(t *testing.T) (func(*proxy.Options), *signing.Key) {
	t.Helper()
	k, err := signing.GenerateKeyDir(filepath.Join(t.TempDir(), "k"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a := &signing.Agent{Keys: []*signing.Key{k}, Active: k, URL: "https://crawler.example"}
	s := &signing.Settings{Agents: egress.Table[*signing.Agent]{Tokens: map[string]*signing.Agent{"examplebot": a}}, All: []*signing.Agent{a}}
	return func(o *proxy.Options) { o.Egress = signing.NewTransport(o.Transport, s) }, k
}

// TestSigningPlainAndIntercepted: with the signing step as Options.Egress,
// a plain request and one inside an intercepted tunnel (over HTTP/1.1 and
// HTTP/2) reach the origin signed, their audit lines carry
// signature_keyid and signature_created; a product token without a key is
// forwarded unsigned, without the fields.
func TestSigningPlainAndIntercepted(t *testing.T) {
	step, key := signingStep(t)
	plain := newVerifyingOrigin(t, false, key)
	secure := newVerifyingOrigin(t, true, key)
	ph := newHarness(t, harnessOptions{proxy: step})
	ih, _, _ := interceptHarnessWith(t, originTLS(secure.origin), secure.origin, nil, step)
	i2, ca, _ := interceptHarnessWith(t, originTLS(secure.origin), secure.origin, nil, step)
	i2.client = h2Client(i2, ca)
	before := time.Now().Unix()
	for _, tc := range []struct {
		h      *harness
		o      *verifyingOrigin
		path   string
		ua     string
		signed bool
	}{
		{ph, plain, "/plain", "ExampleBot/1.0", true},
		{ph, plain, "/plain-other", "OtherBot/1.0", false},
		{ih, secure, "/tunnel", "ExampleBot/1.0", true},
		{ih, secure, "/tunnel-other", "OtherBot/1.0", false},
		{i2, secure, "/h2", "ExampleBot/1.0", true},
		{i2, secure, "/h2-other", "OtherBot/1.0", false},
	} {
		resp, _ := tc.h.do(t, "GET", tc.o.URL+tc.path+"?x=1", tc.ua, "")
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", tc.path, resp.StatusCode)
		}
		want := "unsigned"
		if tc.signed {
			want = key.ID
		}
		if got := tc.o.outcome(tc.path); got != want {
			t.Errorf("%s: the origin saw %q, want %q", tc.path, got, want)
		}
		line := lineFor(t, tc.h, tc.path)
		if tc.h == i2 && line[auditlog.FieldProtocol] != auditlog.ProtocolHTTP2 {
			t.Errorf("%s: audit line %v, want protocol HTTP/2", tc.path, line)
		}
		keyid, hasKey := line[auditlog.FieldSignatureKeyID]
		created, _ := line[auditlog.FieldSignatureCreated].(float64)
		switch {
		case tc.signed && (keyid != key.ID || int64(created) < before || int64(created) > time.Now().Unix()):
			t.Errorf("%s: audit %s=%v %s=%v, want %s and about now", tc.path, auditlog.FieldSignatureKeyID, keyid, auditlog.FieldSignatureCreated, created, key.ID)
		case !tc.signed && (hasKey || line[auditlog.FieldSignatureCreated] != nil):
			t.Errorf("%s: unsigned, but the audit line has signature fields: %v", tc.path, line)
		}
	}
}

// TestSigningOversizedBody: a body over the bound is not sent; the client
// gets 502 and the audit line says why.
func TestSigningOversizedBody(t *testing.T) {
	k, err := signing.GenerateKeyDir(filepath.Join(t.TempDir(), "k"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a := &signing.Agent{Keys: []*signing.Key{k}, Active: k, URL: "https://crawler.example"}
	s := &signing.Settings{MaxBodyBytes: 16, Agents: egress.Table[*signing.Agent]{Default: &a}}
	o := newVerifyingOrigin(t, false, k)
	h := newHarness(t, harnessOptions{proxy: func(po *proxy.Options) { po.Egress = signing.NewTransport(po.Transport, s) }})
	resp, body := h.do(t, "POST", o.URL+"/up", "ExampleBot/1.0", strings.Repeat("x", 17))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(body, "signing.max_body_bytes") {
		t.Errorf("oversized body: %d %q, want 502 naming signing.max_body_bytes", resp.StatusCode, body)
	}
	if o.Count("/up") != 0 {
		t.Error("the oversized body reached the origin")
	}
	if l := lineFor(t, h, "/up"); !strings.Contains(fmt.Sprint(l["error"]), "too large to sign") {
		t.Errorf("audit line %v: want the error", l)
	}
	resp, _ = h.do(t, "POST", o.URL+"/small", "ExampleBot/1.0", strings.Repeat("x", 16))
	if resp.StatusCode != 200 || o.outcome("/small") != k.ID {
		t.Errorf("body at the bound: %d, origin saw %q", resp.StatusCode, o.outcome("/small"))
	}
}

// lineFor returns the audit line of the request to path.
func lineFor(t *testing.T, h *harness, path string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range h.audit.Lines(t) {
			if u, _ := l["url"].(string); strings.Contains(u, path+"?") || strings.HasSuffix(u, path) {
				return l
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("no audit line for %s", path)
	return nil
}
