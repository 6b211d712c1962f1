package e2e

import (
	"crypto/rand"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// interopRequest is a request the interop tests sign and the components
// both verifiers must report it covered.
type interopRequest struct {
	method, path, body string
	components         []string
}

// interopRequests are a GET, a GET with a query and a POST with a body,
// signed under label.
func interopRequests(label string) []interopRequest {
	base := []string{`"@authority"`, `"signature-agent";key="` + label + `"`, `"@method"`, `"@path"`}
	return []interopRequest{
		{"GET", "/page", "", base},
		{"GET", "/search?q=robots&page=2", "", append(slices.Clone(base), `"@query"`)},
		{"POST", "/form", "name=value", append(slices.Clone(base), `"content-digest"`)},
	}
}

// checkAccepted checks that v accepted our signature and reports the
// covered components, tag and keyid we signed with.
func checkAccepted(t *testing.T, what string, v verdict, r interopRequest, keyID string) {
	t.Helper()
	if !v.OK {
		t.Errorf("%s: got %v, want accepted", what, v)
		return
	}
	if !slices.Equal(v.Components, r.components) || v.Tag != "web-bot-auth" || v.Keyid != keyID {
		t.Errorf("%s: verified components %v, tag %q, keyid %q; want %v, web-bot-auth, %s", what, v.Components, v.Tag, v.Keyid, r.components, keyID)
	}
	if r.body != "" && v.ContentDigest != "sha-256 ok" {
		t.Errorf("%s: Content-Digest %q, want sha-256 ok", what, v.ContentDigest)
	}
}

// TestInteropSign signs requests with signing.Sign (the code the proxy's
// signing step runs) and sends them straight to both verifier origins:
// both accept, and both reject the same signatures replayed, sent for
// another path, checked with another key, or expired.
func TestInteropSign(t *testing.T) {
	dir := interopDir(t)
	keyDir, otherDir := filepath.Join(t.TempDir(), "key"), filepath.Join(t.TempDir(), "other")
	key, err := signing.GenerateKeyDir(keyDir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signing.GenerateKeyDir(otherDir, rand.Reader); err != nil {
		t.Fatal(err)
	}
	pub, otherPub := filepath.Join(keyDir, signing.PublicKeyFile), filepath.Join(otherDir, signing.PublicKeyFile)
	agent := &signing.Agent{Keys: []*signing.Key{key}, Active: key, URL: "https://bot.example/keys"}
	settings := &signing.Settings{Label: "interop", Expires: time.Minute}
	sign := func(method, u, body string, s *signing.Settings) *http.Request {
		t.Helper()
		req, err := http.NewRequest(method, u, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body == "" {
			req.Body = http.NoBody
		}
		if _, err := signing.Sign(req, agent, s, nil); err != nil {
			t.Fatalf("signing.Sign %s %s: %v", method, u, err)
		}
		return req
	}
	send := func(req *http.Request) verdict {
		t.Helper()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return readVerdict(t, resp)
	}

	for _, script := range verifierScripts {
		t.Run(script, func(t *testing.T) {
			good := startNodeOrigin(t, dir, script, "--key", pub)
			wrong := startNodeOrigin(t, dir, script, "--key", otherPub, "--ignore-keyid")
			for _, r := range interopRequests("interop") {
				req := sign(r.method, good.base()+r.path, r.body, settings)
				v := send(req)
				checkAccepted(t, r.method+" "+r.path, v, r, key.ID)
				rejects(t, r.method+" "+r.path+" replayed", sendDirect(t, nil, r.method, good.base()+r.path, v.signedHeaders(), r.body), "nonce replayed")
				rejects(t, r.method+" "+r.path+" with another key", send(sign(r.method, wrong.base()+r.path, r.body, settings)), "invalid signature")
			}
			v := send(sign("GET", good.base()+"/page", "", settings))
			rejects(t, "a signature for /page sent for /other", sendDirect(t, nil, "GET", good.base()+"/other", v.signedHeaders(), ""), "invalid signature")
			if v.Seen["signature-agent"] != `interop="https://bot.example/keys"` {
				t.Errorf("Signature-Agent: got %q, want interop=\"https://bot.example/keys\"", v.Seen["signature-agent"])
			}

			short := &signing.Settings{Label: "interop", Expires: time.Second}
			req := sign("GET", good.base()+"/late", "", short)
			waitPast(req.Header)
			rejects(t, "a signature sent after it expired", send(req), "expired")
		})
	}
}
