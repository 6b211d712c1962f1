package signing_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yaronf/httpsign"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// newKey returns a key that can sign (public only when !private), valid
// from nbf to exp (zero: unbounded).
func newKey(t testing.TB, private bool, nbf, exp time.Time) *signing.Key {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k := &signing.Key{ID: signing.Thumbprint(pub), Public: pub, NotBefore: nbf, NotAfter: exp}
	if private {
		k.Private = priv
	}
	return k
}

// thumbprint computes the RFC 7638 thumbprint of an Ed25519 x here, by
// hand (RFC 8037 A.3), not through the package.
func thumbprint(x string) string {
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// member splits an RFC 9651 Dictionary of the shape the directory sends
// (label=value, ...) into its members; values hold no ", ".
func members(t *testing.T, field string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, part := range strings.Split(field, ", ") {
		label, value, ok := strings.Cut(part, "=")
		if !ok {
			t.Fatalf("member %q of %q has no value", part, field)
		}
		m[label] = value
	}
	return m
}

var paramsRE = regexp.MustCompile(`^\("@authority";req "content-digest"\);created=(\d+);expires=(\d+);keyid="([A-Za-z0-9_-]+)";tag="http-message-signatures-directory"$`)

// checkSignatures rebuilds the signature base of each signature of a
// response (RFC 9421 section 2.5) for authority and verifies it with
// crypto/ed25519 against keys (by thumbprint). It returns the keyids
// whose signature verified.
func checkSignatures(t *testing.T, h http.Header, body []byte, authority string, keys map[string]ed25519.PublicKey) []string {
	t.Helper()
	sum := sha256.Sum256(body)
	digest := "sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
	if got := h.Get("Content-Digest"); got != digest {
		t.Fatalf("Content-Digest %q, want %q", got, digest)
	}
	inputs, sigs := members(t, h.Get("Signature-Input")), members(t, h.Get("Signature"))
	if len(inputs) != len(sigs) {
		t.Fatalf("%d Signature-Input members, %d Signature members", len(inputs), len(sigs))
	}
	var ok []string
	for label, params := range inputs {
		m := paramsRE.FindStringSubmatch(params)
		if m == nil {
			t.Fatalf("%s: signature parameters %q: not the directory's", label, params)
		}
		created, _ := strconv.ParseInt(m[1], 10, 64)
		expires, _ := strconv.ParseInt(m[2], 10, 64)
		if now := time.Now().Unix(); created > now+1 || created < now-60 || expires <= created {
			t.Errorf("%s: created %d, expires %d, now %d", label, created, expires, now)
		}
		pub, known := keys[m[3]]
		if !known {
			t.Errorf("%s: keyid %s is no key of the directory", label, m[3])
			continue
		}
		raw, err := base64.StdEncoding.DecodeString(strings.Trim(sigs[label], ":"))
		if err != nil {
			t.Fatalf("%s: signature %q: %v", label, sigs[label], err)
		}
		base := fmt.Sprintf("\"@authority\";req: %s\n\"content-digest\": %s\n\"@signature-params\": %s", authority, digest, params)
		if ed25519.Verify(pub, []byte(base), raw) {
			ok = append(ok, m[3])
		}
	}
	return ok
}

// directoryJWKs decodes a directory body, checking each key's form and
// kid, and returns its public keys by kid and the JWKs.
func directoryJWKs(t *testing.T, body []byte) (map[string]ed25519.PublicKey, map[string]map[string]any) {
	t.Helper()
	var d struct {
		Keys []map[string]any `json:"keys"`
	}
	if err := json.Unmarshal(body, &d); err != nil {
		t.Fatalf("directory %s: %v", body, err)
	}
	pubs, jwks := map[string]ed25519.PublicKey{}, map[string]map[string]any{}
	for _, k := range d.Keys {
		x, _ := k["x"].(string)
		if k["kty"] != "OKP" || k["crv"] != "Ed25519" || k["use"] != "sig" || k["kid"] != thumbprint(x) {
			t.Errorf("key %v: want an OKP Ed25519 signing key named by its thumbprint", k)
		}
		if _, private := k["d"]; private {
			t.Fatalf("key %v: a private key in the directory", k)
		}
		raw, _ := base64.RawURLEncoding.DecodeString(x)
		pubs[thumbprint(x)], jwks[thumbprint(x)] = ed25519.PublicKey(raw), k
	}
	return pubs, jwks
}

// agentHost is the authority of the tests' signature_agent URLs: what
// get asks for.
const agentHost = "bot.example"

// get sends method url with Host agentHost (the directory's authority),
// and returns the response and its body.
func get(t *testing.T, method, url string) (*http.Response, []byte) {
	t.Helper()
	return getHost(t, method, url, agentHost)
}

// getHost sends method url with Host host.
func getHost(t *testing.T, method, url, host string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Host = host
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

// TestDirectoryServed serves the directory of two identities (three keys,
// one of them shared and one public only) and checks the response as a
// verifier would: media type, the JWKS with nbf/exp, the Content-Digest,
// and one signature per key that can sign, rebuilt and verified here;
// the signatures are bound to the authority asked.
func TestDirectoryServed(t *testing.T) {
	nbf, exp := time.Unix(1_800_000_000, 0), time.Unix(1_900_000_000, 0)
	active, shared, retired := newKey(t, true, nbf, exp), newKey(t, true, time.Time{}, time.Time{}), newKey(t, false, time.Time{}, exp)
	p, err := signing.Publish([]signing.Entry{
		{Slug: "examplebot", ProductToken: "ExampleBot", SignatureAgent: "https://bot.example", Keys: []*signing.Key{active, shared, retired}},
		{Slug: "default", ProductToken: "*", Keys: []*signing.Key{shared}},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(signing.NewDirectoryServer(p, signing.DirectoryOptions{}))
	defer srv.Close()
	res, body := get(t, "GET", srv.URL+signing.DirectoryPath)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/http-message-signatures-directory+json" {
		t.Fatalf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	pubs, jwks := directoryJWKs(t, body)
	if len(pubs) != 3 {
		t.Fatalf("keys %s: want 3 (the shared key once)", body)
	}
	if j := jwks[active.ID]; j["nbf"] != float64(nbf.Unix()) || j["exp"] != float64(exp.Unix()) {
		t.Errorf("active key %v: want nbf %d, exp %d", j, nbf.Unix(), exp.Unix())
	}
	if _, has := jwks[shared.ID]["nbf"]; has {
		t.Errorf("unbounded key %v has nbf", jwks[shared.ID])
	}
	authority := agentHost
	got := checkSignatures(t, res.Header, body, authority, pubs)
	if fmt.Sprint(sortStrings(got)) != fmt.Sprint(sortStrings([]string{active.ID, shared.ID})) {
		t.Errorf("verified signatures of %v, want those of the two keys that can sign", got)
	}
	if other := checkSignatures(t, res.Header, body, "elsewhere.example", pubs); len(other) != 0 {
		t.Errorf("signatures verify for another authority: %v", other)
	}
	// An RFC 9421 implementation we did not write agrees (sig1 is the
	// first key that can sign: the active one).
	fields := httpsign.NewFields().AddHeaderExt("@authority", false, false, true, false).AddHeader("content-digest")
	v, err := httpsign.NewEd25519Verifier(active.Public, httpsign.NewVerifyConfig().SetKeyID(active.ID).
		SetAllowedTags([]string{signing.DirectoryTag}), *fields)
	if err != nil {
		t.Fatal(err)
	}
	req := &http.Request{Method: "GET", Host: authority, URL: &url.URL{Path: signing.DirectoryPath}, Header: http.Header{}}
	if err := httpsign.VerifyResponse("sig1", *v, res, req); err != nil {
		t.Errorf("httpsign does not verify the directory's sig1: %v", err)
	}
	if cc := res.Header.Get("Cache-Control"); !strings.HasPrefix(cc, "max-age=") {
		t.Errorf("Cache-Control %q", cc)
	}
}

func sortStrings(s []string) []string {
	out := append([]string{}, s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestDirectoryRequests: HEAD, other methods, other paths, the cards.
func TestDirectoryRequests(t *testing.T) {
	k := newKey(t, true, time.Time{}, time.Time{})
	p, err := signing.Publish([]signing.Entry{{Slug: "examplebot", ProductToken: "ExampleBot",
		SignatureAgent: "https://bot.example/.well-known/http-message-signatures-directory",
		Card:           signing.Card{Name: "Example Bot", Purpose: "search", Contact: "bots@example.com", Description: "https://example.com/bot"},
		Keys:           []*signing.Key{k}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(signing.NewDirectoryServer(p, signing.DirectoryOptions{}))
	defer srv.Close()
	for _, tt := range []struct {
		method, path string
		status       int
		contentType  string
	}{
		{"GET", signing.DirectoryPath, 200, signing.DirectoryContentType},
		{"HEAD", signing.DirectoryPath, 200, signing.DirectoryContentType},
		{"POST", signing.DirectoryPath, 405, ""},
		{"GET", "/", 404, ""},
		{"GET", signing.DirectoryPath + "/x", 404, ""},
		// Discovery takes a 200 and follows no redirect (-01 section
		// 5.5): another spelling of the path is a 404, never a redirect
		// (get would follow one to the 200).
		{"GET", signing.DirectoryPath + "/", 404, ""},
		{"GET", "/" + signing.DirectoryPath, 404, ""},
		{"GET", "/.well-known/./http-message-signatures-directory", 404, ""},
		{"GET", "/.well-known/HTTP-MESSAGE-SIGNATURES-DIRECTORY", 404, ""},
		{"GET", signing.CardPath, 200, "application/json"},
		{"GET", signing.CardsPrefix + "examplebot.json", 200, "application/json"},
		{"GET", signing.CardsPrefix + "otherbot.json", 404, ""},
		{"GET", signing.CardsPrefix + "../x.json", 404, ""},
	} {
		res, body := get(t, tt.method, srv.URL+tt.path)
		if res.StatusCode != tt.status || tt.contentType != "" && res.Header.Get("Content-Type") != tt.contentType {
			t.Errorf("%s %s: status %d, Content-Type %q; want %d, %q", tt.method, tt.path, res.StatusCode, res.Header.Get("Content-Type"), tt.status, tt.contentType)
		}
		if tt.method == "HEAD" && (len(body) != 0 || res.Header.Get("Signature") == "") {
			t.Errorf("HEAD: body %q, Signature %q", body, res.Header.Get("Signature"))
		}
	}
	res, body := get(t, "GET", srv.URL+signing.CardsPrefix+"examplebot.json")
	var card map[string]any
	if err := json.Unmarshal(body, &card); err != nil {
		t.Fatal(err)
	}
	// draft-meunier-webbotauth-registry-04: client metadata and a
	// web_bot_auth object; the keys by jwks_uri, the Signature-Agent URL.
	want := `{"client_id":"https://bot.example/.well-known/signature-agent-cards/examplebot.json","client_name":"Example Bot",` +
		`"client_uri":"https://example.com/bot","contacts":["mailto:bots@example.com"],` +
		`"jwks_uri":"https://bot.example/.well-known/http-message-signatures-directory",` +
		`"web_bot_auth":{"purpose":"search","rfc9309-compliance":true,"rfc9309-product-token":"ExampleBot"}}`
	if string(body) != want {
		t.Errorf("card:\n%s\nwant\n%s", body, want)
	}
	if got := checkSignatures(t, res.Header, body, agentHost, map[string]ed25519.PublicKey{k.ID: k.Public}); len(got) != 1 {
		t.Errorf("card signatures verified: %v", got)
	}
}

// TestDirectorySet: the server serves the directory last Set (a reload's
// keys), whole.
func TestDirectorySet(t *testing.T) {
	old, next := newKey(t, true, time.Time{}, time.Time{}), newKey(t, true, time.Time{}, time.Time{})
	p1, _ := signing.Publish([]signing.Entry{{Slug: "default", SignatureAgent: "https://bot.example", Keys: []*signing.Key{old}}})
	p2, _ := signing.Publish([]signing.Entry{{Slug: "default", SignatureAgent: "https://bot.example", Keys: []*signing.Key{old, next}}})
	d := signing.NewDirectoryServer(p1, signing.DirectoryOptions{})
	srv := httptest.NewServer(d)
	defer srv.Close()
	for i, want := range [][]string{{old.ID}, {old.ID, next.ID}} {
		if i == 1 {
			d.Set(p2)
		}
		res, body := get(t, "GET", srv.URL+signing.DirectoryPath)
		pubs, _ := directoryJWKs(t, body)
		got := checkSignatures(t, res.Header, body, agentHost, pubs)
		if fmt.Sprint(sortStrings(got)) != fmt.Sprint(sortStrings(want)) || len(pubs) != len(want) {
			t.Errorf("after %d sets: keys %d, signed by %v; want %v", i, len(pubs), got, want)
		}
	}
}

func TestPublishRefuses(t *testing.T) {
	k := newKey(t, true, time.Time{}, time.Time{})
	for name, agents := range map[string][]signing.Entry{
		"bad slug":       {{Slug: "Example Bot", Keys: []*signing.Key{k}}},
		"empty slug":     {{Slug: "", Keys: []*signing.Key{k}}},
		"same slug":      {{Slug: "a", Keys: []*signing.Key{k}}, {Slug: "a"}},
		"key without ID": {{Slug: "a", Keys: []*signing.Key{{Public: k.Public}}}},
	} {
		if _, err := signing.Publish(agents); err == nil {
			t.Errorf("%s: published", name)
		}
	}
}

func TestNormalizeAuthority(t *testing.T) {
	for _, tt := range []struct{ host, scheme, want string }{
		{"Example.COM", "https", "example.com"},
		{"example.com:443", "https", "example.com"},
		{"example.com:443", "http", "example.com:443"},
		{"example.com:80", "http", "example.com"},
		{"example.com:8443", "https", "example.com:8443"},
		{"[::1]:443", "https", "[::1]"},
		{"[::1]:8080", "https", "[::1]:8080"},
	} {
		if got, err := signing.NormalizeAuthority(tt.host, tt.scheme); err != nil || got != tt.want {
			t.Errorf("NormalizeAuthority(%q, %q) = %q, %v; want %q", tt.host, tt.scheme, got, err, tt.want)
		}
	}
	if _, err := signing.NormalizeAuthority("", "https"); err == nil {
		t.Error("an empty host: no error")
	}
}

// TestWriteStatic: the static files hold the directory and the cards, and
// their .headers files signatures that verify for the authority given.
func TestWriteStatic(t *testing.T) {
	k := newKey(t, true, time.Time{}, time.Time{})
	p, err := signing.Publish([]signing.Entry{{Slug: "examplebot", ProductToken: "ExampleBot", SignatureAgent: "https://bot.example", Keys: []*signing.Key{k}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	written, err := p.WriteStatic(dir, "Bot.Example:443", time.Now(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 6 {
		t.Errorf("wrote %v: want the directory and two card paths, each with its headers", written)
	}
	for _, path := range []string{signing.DirectoryPath, signing.CardPath, signing.CardsPrefix + "examplebot.json"} {
		file := dir + path
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(file + signing.HeadersSuffix)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			name, value, _ := strings.Cut(line, ": ")
			h.Add(name, value)
		}
		pubs := map[string]ed25519.PublicKey{k.ID: k.Public}
		if path == signing.DirectoryPath {
			if h.Get("Content-Type") != signing.DirectoryContentType {
				t.Errorf("%s: Content-Type %q", path, h.Get("Content-Type"))
			}
			pubs, _ = directoryJWKs(t, body)
		}
		if got := checkSignatures(t, h, body, "bot.example", pubs); len(got) != 1 {
			t.Errorf("%s: %d signatures verify for bot.example, want 1", path, len(got))
		}
	}
}
