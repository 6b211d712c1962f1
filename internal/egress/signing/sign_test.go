package signing

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

const agentURL = "https://bot.example/"

func newAgent(t testing.TB) *Agent {
	t.Helper()
	k, err := GenerateKeyDir(filepath.Join(t.TempDir(), "key"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &Agent{Keys: []*Key{k}, Active: k, URL: agentURL}
}

func TestSign(t *testing.T) {
	agent := newAgent(t)
	base := []string{`"@authority"`, `"signature-agent";key="robotsproxy"`, `"@method"`, `"@path"`}
	for _, tc := range []struct {
		name, method, url, body string
		chunked                 bool
		header                  http.Header
		wantComponents          []string
		wantHost                string
	}{
		{name: "get", method: "GET", url: "http://Example.COM/a/b", wantComponents: base, wantHost: "example.com"},
		{name: "default port", method: "GET", url: "https://example.com:443/", wantComponents: base, wantHost: "example.com"},
		{name: "other port", method: "GET", url: "http://example.com:8080/x", wantComponents: base, wantHost: "example.com:8080"},
		{name: "empty path", method: "GET", url: "http://example.com", wantComponents: base, wantHost: "example.com"},
		{name: "query", method: "GET", url: "http://example.com/s?q=a%20b&x=1", wantComponents: append(slices.Clone(base), `"@query"`), wantHost: "example.com"},
		{name: "body", method: "POST", url: "http://example.com/form", body: "a=1&b=2", wantComponents: append(slices.Clone(base), `"content-digest"`), wantHost: "example.com"},
		{name: "chunked body", method: "POST", url: "http://example.com/form", body: "streamed", chunked: true, wantComponents: append(slices.Clone(base), `"content-digest"`), wantHost: "example.com"},
		{name: "empty chunked body", method: "POST", url: "http://example.com/form", chunked: true, wantComponents: base, wantHost: "example.com"},
		{name: "prices", method: "GET", url: "http://example.com/paid", header: http.Header{"Crawler-Exact-Price": {"USD 0.01"}},
			wantComponents: append(slices.Clone(base), `"crawler-exact-price"`), wantHost: "example.com"},
		{name: "max price", method: "GET", url: "http://example.com/paid", header: http.Header{"Crawler-Max-Price": {"USD 0.05"}},
			wantComponents: append(slices.Clone(base), `"crawler-max-price"`), wantHost: "example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, tc.method, tc.url, tc.body, tc.chunked)
			for k, v := range tc.header {
				req.Header[k] = v
			}
			before := time.Now().Unix()
			signed, err := Sign(req, agent, &Settings{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if req.Host != tc.wantHost {
				t.Errorf("Host = %q, want %q", req.Host, tc.wantHost)
			}
			ps := verifySig(t, req, "robotsproxy", agent.Active.Public)
			verifyLibrary(t, req, "robotsproxy", agent.Active)
			if !slices.Equal(ps.components, tc.wantComponents) {
				t.Errorf("components %q, want %q", ps.components, tc.wantComponents)
			}
			checkParams(t, ps, agent.Active.ID, before, DefaultExpires)
			if signed.KeyID != agent.Active.ID || !signed.Created.Equal(ps.created()) {
				t.Errorf("Signed = %+v, want keyid %s created %v", signed, agent.Active.ID, ps.created())
			}
			if got := req.Header.Get("Signature-Agent"); got != `robotsproxy="`+agentURL+`"` {
				t.Errorf("Signature-Agent = %q", got)
			}
			checkBody(t, req, tc.body)
		})
	}
}

func newRequest(t testing.TB, method, url, body string, chunked bool) *http.Request {
	t.Helper()
	var r io.Reader
	if body != "" || chunked {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if chunked {
		req.ContentLength = -1
		req.Body = io.NopCloser(strings.NewReader(body)) // no GetBody, length unknown
		req.GetBody = nil
	}
	return req
}

// checkParams checks the signature parameters the protocol draft asks for.
func checkParams(t *testing.T, ps parsedSig, keyID string, before int64, expires time.Duration) {
	t.Helper()
	created, _ := ps.params["created"].(int64)
	exp, _ := ps.params["expires"].(int64)
	if created < before || created > time.Now().Unix() {
		t.Errorf("created %d, want within [%d, now]", created, before)
	}
	if exp <= created || exp-created > int64(expires/time.Second) || exp < before+int64(expires/time.Second) {
		t.Errorf("expires %d, created %d: want created+%v", exp, created, expires)
	}
	if ps.params["keyid"] != keyID || ps.params["tag"] != Tag {
		t.Errorf("params %v: want keyid %s, tag %s", ps.params, keyID, Tag)
	}
	nonce, _ := ps.params["nonce"].(string)
	if b, err := base64.StdEncoding.DecodeString(nonce); err != nil || len(b) != 32 {
		t.Errorf("nonce %q: want 32 octets in base64", nonce)
	}
	if _, ok := ps.params["alg"]; ok {
		t.Errorf("params %v: alg is not asked for", ps.params)
	}
}

// checkBody checks that the body is sent whole, with a Content-Digest of
// its SHA-256 (RFC 9530) when it is not empty.
func checkBody(t *testing.T, req *http.Request, want string) {
	t.Helper()
	if want == "" {
		if req.Header.Get("Content-Digest") != "" {
			t.Errorf("Content-Digest %q without a body", req.Header.Get("Content-Digest"))
		}
		return
	}
	got, err := io.ReadAll(req.Body)
	if err != nil || string(got) != want || req.ContentLength != int64(len(want)) {
		t.Errorf("body %q (%v), length %d; want %q", got, err, req.ContentLength, want)
	}
	sum := sha256.Sum256([]byte(want))
	if d := req.Header.Get("Content-Digest"); d != "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":" {
		t.Errorf("Content-Digest %q", d)
	}
}

func TestSignExpires(t *testing.T) {
	agent := newAgent(t)
	for _, d := range []time.Duration{time.Second, 5 * time.Minute, MaxExpires} {
		req := newRequest(t, "GET", "http://example.com/", "", false)
		before := time.Now().Unix()
		if _, err := Sign(req, agent, &Settings{Expires: d}, nil); err != nil {
			t.Fatal(err)
		}
		checkParams(t, verifySig(t, req, DefaultLabel, agent.Active.Public), agent.Active.ID, before, d)
	}
	for _, s := range []Settings{{Expires: MaxExpires + time.Second}, {Expires: -time.Second}, {Label: "Bad Label"}, {MaxBodyBytes: -1}} {
		if err := s.Validate(time.Now()); err == nil {
			t.Errorf("Validate(%+v) = nil, want an error", s)
		}
	}
	pubOnly := &Agent{Active: &Key{ID: agent.Active.ID, Public: agent.Active.Public}, URL: agentURL}
	httpAgent := &Agent{Active: agent.Active, URL: "http://bot.example"}
	for _, a := range []*Agent{pubOnly, httpAgent, {URL: agentURL}} {
		if err := (&Settings{All: []*Agent{agent, a}}).Validate(time.Now()); err == nil || !strings.Contains(err.Error(), "agent 1") {
			t.Errorf("Validate with agent %+v: %v, want an error naming agent 1", a, err)
		}
	}
	if err := (&Settings{Expires: MaxExpires, Label: "bot-1.a", All: []*Agent{agent}}).Validate(time.Now()); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestSignBodyBound(t *testing.T) {
	agent := newAgent(t)
	for _, tc := range []struct {
		name    string
		size    int
		chunked bool
		ok      bool
	}{
		{"at the bound", 64, false, true},
		{"over the bound", 65, false, false},
		{"chunked at the bound", 64, true, true},
		{"chunked over the bound", 65, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, "PUT", "http://example.com/up", strings.Repeat("b", tc.size), tc.chunked)
			_, err := Sign(req, agent, &Settings{MaxBodyBytes: 64}, nil)
			if tc.ok {
				if err != nil {
					t.Fatal(err)
				}
				verifySig(t, req, DefaultLabel, agent.Active.Public)
				return
			}
			if !errors.Is(err, ErrBodyTooLarge) || !strings.Contains(err.Error(), "signing.max_body_bytes") {
				t.Errorf("got %v, want ErrBodyTooLarge naming signing.max_body_bytes", err)
			}
		})
	}
}

// TestSignClientSigned checks that a request the client signed itself
// keeps its signature and Signature-Agent member, and that ours takes a
// free label.
func TestSignClientSigned(t *testing.T) {
	agent, client := newAgent(t), newAgent(t)
	client.URL = "https://client.example"
	for _, tc := range []struct {
		name, clientLabel, ourLabel, want string
	}{
		{"other label", "sig1", "robotsproxy", "robotsproxy"},
		{"label clash", "robotsproxy", "robotsproxy", "robotsproxy1"},
		{"custom label clash", "crawler", "crawler", "crawler1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, "POST", "http://example.com/p?q=1", "data", false)
			if _, err := Sign(req, client, &Settings{Label: tc.clientLabel}, nil); err != nil {
				t.Fatal(err)
			}
			clientAgent := req.Header.Get("Signature-Agent")
			signed, err := Sign(req, agent, &Settings{Label: tc.ourLabel}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if signed.Label != tc.want {
				t.Errorf("label %q, want %q", signed.Label, tc.want)
			}
			verifySig(t, req, tc.clientLabel, client.Active.Public)
			ours := verifySig(t, req, tc.want, agent.Active.Public)
			verifyLibrary(t, req, tc.clientLabel, client.Active)
			verifyLibrary(t, req, tc.want, agent.Active)
			if ours.components[1] != `"signature-agent";key="`+tc.want+`"` {
				t.Errorf("components %q", ours.components)
			}
			if got := req.Header.Get("Signature-Agent"); !strings.HasPrefix(got, clientAgent+", ") {
				t.Errorf("Signature-Agent %q: the client's member %q was rewritten", got, clientAgent)
			}
		})
	}
}

func TestSignRefusals(t *testing.T) {
	agent := newAgent(t)
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
		want   string
	}{
		{"whole agent field covered", http.Header{
			"Signature-Agent": {`"https://client.example"`},
			"Signature-Input": {`sig1=("@authority" "signature-agent");created=1`},
			"Signature":       {`sig1=:AAAA:`}}, "", "not a structured field dictionary"},
		{"whole dictionary covered", http.Header{
			"Signature-Agent": {`sig1="https://client.example"`},
			"Signature-Input": {`sig1=("@authority" "signature-agent");created=1`},
			"Signature":       {`sig1=:AAAA:`}}, "", "covers the whole Signature-Agent"},
		{"bad Signature-Input", http.Header{"Signature-Input": {`(((`}}, "", "Signature-Input"},
		{"wrong digest", http.Header{"Content-Digest": {`sha-256=:AAAA:`}}, "x", "does not match"},
		{"digest without sha-256", http.Header{"Content-Digest": {`sha-512=:AAAA:`}}, "x", "no sha-256"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := newRequest(t, "POST", "http://example.com/", tc.body, false)
			for k, v := range tc.header {
				req.Header[k] = v
			}
			_, err := Sign(req, agent, &Settings{}, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
			if c := ErrorCause(err); c != CauseClientField {
				t.Errorf("cause %q, want %q", c, CauseClientField)
			}
		})
	}
	// A client's matching Content-Digest is kept and covered.
	req := newRequest(t, "POST", "http://example.com/", "x", false)
	sum := sha256.Sum256([]byte("x"))
	mine := "sha-512=:AAAA:, sha-256=:" + base64.StdEncoding.EncodeToString(sum[:]) + ":"
	req.Header.Set("Content-Digest", mine)
	if _, err := Sign(req, agent, &Settings{}, nil); err != nil {
		t.Fatal(err)
	}
	verifySig(t, req, DefaultLabel, agent.Active.Public)
	if got := req.Header.Get("Content-Digest"); got != mine {
		t.Errorf("Content-Digest %q, want the client's %q", got, mine)
	}
	// A public-only key cannot sign.
	pubOnly := &Agent{Active: &Key{ID: agent.Active.ID, Public: agent.Active.Public}, URL: agentURL}
	if _, err := Sign(newRequest(t, "GET", "http://example.com/", "", false), pubOnly, &Settings{}, nil); err == nil {
		t.Error("a public-only key signed")
	}
}

func TestSignNonceUnique(t *testing.T) {
	agent := newAgent(t)
	seen := map[string]bool{}
	for range 20 {
		req := newRequest(t, "GET", "http://example.com/", "", false)
		if _, err := Sign(req, agent, &Settings{}, nil); err != nil {
			t.Fatal(err)
		}
		n := verifySig(t, req, DefaultLabel, agent.Active.Public).params["nonce"].(string)
		if seen[n] {
			t.Fatalf("nonce %q repeated", n)
		}
		seen[n] = true
	}
	if _, err := Sign(newRequest(t, "GET", "http://example.com/", "", false), agent, &Settings{}, bytes.NewReader(nil)); err == nil {
		t.Error("a failing nonce source: no error")
	}
}
