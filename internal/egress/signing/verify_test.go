package signing

import (
	"crypto/ed25519"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/dunglas/httpsfv"
	"github.com/yaronf/httpsign"
)

// parsedSig is one signature parsed back from a request's fields.
type parsedSig struct {
	components []string // as serialized in Signature-Input
	params     map[string]any
	base       string
}

// verifySig parses the member label of req's Signature-Input and
// Signature, builds the signature base independently of the signer
// (RFC 9421 section 2.5) and verifies it with pub. It fails t when the
// signature does not verify.
func verifySig(t *testing.T, req *http.Request, label string, pub ed25519.PublicKey) parsedSig {
	t.Helper()
	inputs, err := httpsfv.UnmarshalDictionary(req.Header.Values("Signature-Input"))
	if err != nil {
		t.Fatalf("Signature-Input %q: %v", req.Header.Values("Signature-Input"), err)
	}
	sigs, err := httpsfv.UnmarshalDictionary(req.Header.Values("Signature"))
	if err != nil {
		t.Fatalf("Signature: %v", err)
	}
	m, ok := inputs.Get(label)
	if !ok {
		t.Fatalf("no Signature-Input member %q in %q", label, req.Header.Values("Signature-Input"))
	}
	il := m.(httpsfv.InnerList)
	sm, ok := sigs.Get(label)
	if !ok {
		t.Fatalf("no Signature member %q", label)
	}
	sig := sm.(httpsfv.Item).Value.([]byte)
	var ps parsedSig
	ps.params = map[string]any{}
	for _, name := range il.Params.Names() {
		v, _ := il.Params.Get(name)
		ps.params[name] = v
	}
	var b strings.Builder
	for _, it := range il.Items {
		id, err := httpsfv.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		ps.components = append(ps.components, id)
		fmt.Fprintf(&b, "%s: %s\n", id, componentValue(t, req, it))
	}
	params, err := httpsfv.Marshal(il)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "\"@signature-params\": %s", params)
	ps.base = b.String()
	if !ed25519.Verify(pub, []byte(ps.base), sig) {
		t.Fatalf("signature %q does not verify over the base\n%s", label, ps.base)
	}
	return ps
}

// componentValue derives a covered component's value from req as a
// receiving origin would (RFC 9421 sections 2.1 and 2.2).
func componentValue(t *testing.T, req *http.Request, it httpsfv.Item) string {
	t.Helper()
	name := it.Value.(string)
	switch name {
	case "@authority":
		return req.Host
	case "@method":
		return req.Method
	case "@path":
		return req.URL.EscapedPath()
	case "@query":
		return "?" + req.URL.RawQuery
	}
	vals := req.Header.Values(name)
	if len(vals) == 0 {
		t.Fatalf("covered field %q is absent", name)
	}
	if key, ok := it.Params.Get("key"); ok {
		d, err := httpsfv.UnmarshalDictionary(vals)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		mem, ok := d.Get(key.(string))
		if !ok {
			t.Fatalf("%s has no member %q", name, key)
		}
		s, err := httpsfv.Marshal(mem.(httpsfv.Item))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for i := range vals {
		vals[i] = strings.TrimSpace(vals[i])
	}
	return strings.Join(vals, ", ")
}

// created returns the created parameter as a time.
func (ps parsedSig) created() time.Time { return time.Unix(ps.params["created"].(int64), 0) }

// verifyLibrary verifies the signature label of req with an RFC 9421
// implementation we did not write (github.com/yaronf/httpsign), requiring
// the components the protocol draft asks for.
func verifyLibrary(t *testing.T, req *http.Request, label string, k *Key) {
	t.Helper()
	fields := httpsign.Headers("@authority", "@method", "@path")
	fields.AddDictHeader("signature-agent", label)
	cfg := httpsign.NewVerifyConfig().SetKeyID(k.ID).SetAllowedTags([]string{Tag})
	v, err := httpsign.NewEd25519Verifier(k.Public, cfg, fields)
	if err != nil {
		t.Fatal(err)
	}
	if err := httpsign.VerifyRequest(label, *v, req); err != nil {
		t.Errorf("httpsign does not verify %q: %v", label, err)
	}
}
