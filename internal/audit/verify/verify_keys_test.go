package verify_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// testJWK is an Ed25519 public key as a directory lists it, its kid
// computed here from RFC 7638 3.3 by hand.
func testJWK(t *testing.T, nbf, exp int64) map[string]any {
	t.Helper()
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	x := base64.RawURLEncoding.EncodeToString(pub)
	sum := sha256.Sum256([]byte(`{"crv":"Ed25519","kty":"OKP","x":"` + x + `"}`))
	k := map[string]any{"kty": "OKP", "crv": "Ed25519", "x": x, "kid": base64.RawURLEncoding.EncodeToString(sum[:])}
	if nbf != 0 {
		k["nbf"] = nbf
	}
	if exp != 0 {
		k["exp"] = exp
	}
	return k
}

func jwks(t *testing.T, keys ...map[string]any) []byte {
	t.Helper()
	if keys == nil {
		keys = []map[string]any{}
	}
	b, err := json.Marshal(map[string]any{"keys": keys})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// writeSignedLog writes a chained log of one line per (keyid, created)
// pair; created < 0 leaves signature_created out.
func writeSignedLog(t *testing.T, path string, sigs [][2]any) {
	t.Helper()
	out, prev, err := audit.OpenFile(audit.FileOptions{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(out, audit.Options{Chain: true, Prev: prev})
	for _, s := range sigs {
		line := `{"time":"2026-11-26T12:00:00Z","method":"GET","url":"http://example.com/","decision":"deny","reason":"host-denied"`
		if kid := s[0].(string); kid != "" {
			line += `,"signature_keyid":"` + kid + `"`
		}
		if c := s[1].(int64); c >= 0 {
			line += fmt.Sprintf(`,"signature_created":%d`, c)
		}
		if _, err := w.Write([]byte(line + ",\"status\":403}\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestVerifySignatureKeys checks each signed line's keyid against the key
// directory archived at start: a genuine line verifies, a forged keyid, a
// key used outside its nbf/exp or before it was published, and a line
// with half the fields fail with kind signature.
func TestVerifySignatureKeys(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 500e6, time.UTC) // the start, mid-second
	s0 := t0.Unix()
	plain := testJWK(t, 0, 0)
	bounded := testJWK(t, s0+100, s0+200)
	forged := testJWK(t, 0, 0) // never archived
	kid := func(k map[string]any) string { return k["kid"].(string) }
	tests := []struct {
		name    string
		keyid   string
		created int64 // -1: absent
		want    verify.Kind
	}{
		{"genuine", kid(plain), s0 + 10, ""},
		{"genuine in the second of the start", kid(plain), s0, ""},
		{"genuine within nbf/exp", kid(bounded), s0 + 150, ""},
		{"forged keyid", kid(forged), s0 + 10, verify.KindSignature},
		{"before nbf", kid(bounded), s0 + 99, verify.KindSignature},
		{"at exp", kid(bounded), s0 + 200, verify.KindSignature},
		{"before the key was published", kid(plain), s0 - 1, verify.KindSignature},
		{"keyid without created", kid(plain), -1, verify.KindSignature},
		{"created without keyid", "", s0 + 10, verify.KindSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: filepath.Join(dir, "archive"), Log: zerolog.Nop()})
			if err != nil {
				t.Fatal(err)
			}
			if err := ar.RecordKeys(jwks(t, plain, bounded), t0, "start"); err != nil {
				t.Fatal(err)
			}
			log := filepath.Join(dir, "audit.log")
			writeSignedLog(t, log, [][2]any{{kid(plain), s0 + 5}, {tt.keyid, tt.created}})
			var got []verify.Kind
			res, err := verify.Verify([]string{log}, verify.VerifyOptions{Archive: filepath.Join(dir, "archive"),
				Report: func(p verify.Problem) { got = append(got, p.Kind); t.Log(p) }})
			if err != nil {
				t.Fatal(err)
			}
			var want []verify.Kind
			if tt.want != "" {
				want = []verify.Kind{tt.want}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("problems: got %v, want %v", got, want)
			}
			if res.Signed != 2 || res.OK(false) != (tt.want == "") {
				t.Errorf("signed %d (want 2), OK %v", res.Signed, res.OK(false))
			}
		})
	}
}

// TestVerifySignatureKeysAltered: a key snapshot edited in the archive
// (a key added) does not count, and the line is reported as altered.
func TestVerifySignatureKeysAltered(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "archive")
	ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: archive, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	k1, k2 := testJWK(t, 0, 0), testJWK(t, 0, 0)
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if err := ar.RecordKeys(jwks(t, k1), t0, "start"); err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(archive, "keys", "*", "*.json"))
	if len(snaps) != 1 {
		t.Fatalf("snapshots: %v", snaps)
	}
	b, _ := os.ReadFile(snaps[0])
	var s audit.KeySnapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	s.Directory = jwks(t, k1, k2) // the forger adds a key
	b, _ = json.Marshal(s)
	os.WriteFile(snaps[0], b, 0o644)

	log := filepath.Join(dir, "audit.log")
	writeSignedLog(t, log, [][2]any{{k2["kid"].(string), t0.Unix() + 5}})
	var got []verify.Problem
	if _, err := verify.Verify([]string{log}, verify.VerifyOptions{Archive: archive,
		Report: func(p verify.Problem) { got = append(got, p) }}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Kind != verify.KindAltered || !strings.Contains(got[0].Msg, "hashes to") {
		t.Errorf("problems: got %v, want one altered", got)
	}
}

// TestRecordKeysRefuses: what is not a JWKS of thumbprint-named Ed25519
// keys is not archived.
func TestRecordKeysRefuses(t *testing.T) {
	ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: t.TempDir(), Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	wrongKid := testJWK(t, 0, 0)
	wrongKid["kid"] = "not-the-thumbprint"
	for name, dir := range map[string][]byte{
		"not JSON":  []byte("keys"),
		"no keys":   []byte(`{}`),
		"wrong kid": jwks(t, wrongKid),
		"RSA":       []byte(`{"keys":[{"kty":"RSA","n":"x","e":"AQAB","kid":"a"}]}`),
	} {
		if err := ar.RecordKeys(dir, time.Now(), "start"); err == nil {
			t.Errorf("%s: archived", name)
		}
	}
	if err := ar.RecordKeys(jwks(t), time.Now(), "start"); err != nil {
		t.Errorf("an empty directory: %v", err)
	}
}

// TestVerifySignatureWithoutArchive: without an archive a signed line is
// unverifiable, and -chain-only does not check it.
func TestVerifySignatureWithoutArchive(t *testing.T) {
	log := filepath.Join(t.TempDir(), "audit.log")
	writeSignedLog(t, log, [][2]any{{"abc", int64(1)}})
	for _, chainOnly := range []bool{false, true} {
		res, err := verify.Verify([]string{log}, verify.VerifyOptions{ChainOnly: chainOnly})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 0}[chainOnly]; res.Unverifiable != want || res.Signatures != 0 {
			t.Errorf("chain only %v: unverifiable %d (want %d), signatures %d", chainOnly, res.Unverifiable, want, res.Signatures)
		}
	}
}
