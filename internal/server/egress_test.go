package server

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/dunglas/httpsfv"
	"github.com/yaronf/httpsign"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// With signing and pay per crawl both on, the paid retry goes through the
// signing step: the origin, verifying every request with an RFC 9421
// library we did not write, sees the first request signed and the retry
// signed again with crawler-exact-price covered, under our one label (the
// first attempt's signature is not carried into the retry).
func TestSignedPaidRetry(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "key")
	key, err := signing.GenerateKeyDir(dir, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	o := paytest.New(t, "USD 0.01")
	var mu sync.Mutex
	var covered [][]string
	o.Check = func(r *http.Request) error {
		fields := httpsign.Headers("@authority", "@method", "@path")
		fields.AddDictHeader("signature-agent", "robotsproxy")
		price := r.Header.Get("crawler-exact-price") != ""
		if price {
			fields.AddHeader("crawler-exact-price")
		}
		err := verifyWith(r, key, fields)
		names, nerr := coveredNames(r, "robotsproxy")
		mu.Lock()
		defer mu.Unlock()
		if err != nil || nerr != nil {
			covered = append(covered, []string{"FAILED: " + fmt.Sprint(err, nerr)})
			return errors.Join(err, nerr)
		}
		covered = append(covered, names)
		return nil
	}
	ts := startServer(t, func(c *config.Config) {
		payingConfig("0.05", "")(c)
		c.Signing = config.Signing{Enabled: true, Label: "robotsproxy", Expires: signing.DefaultExpires,
			MaxBodyBytes: signing.DefaultMaxBodyBytes, Identities: []config.SigningIdentity{
				{ProductToken: "ExampleBot", Keys: []string{dir}, SignatureAgent: "https://crawler.example"}}}
	})
	resp := proxyGet(t, ts.addr, o.URL+"/page")
	if resp.StatusCode != http.StatusOK || o.Paid() != 1 {
		t.Fatalf("status %d, origin paid %d; want 200 and 1 (checks: %q)", resp.StatusCode, o.Paid(), covered)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(covered) != 2 || !slices.Contains(covered[1], "crawler-exact-price") || slices.Contains(covered[0], "crawler-exact-price") {
		t.Fatalf("covered components of the two requests %q; want the retry alone to cover crawler-exact-price", covered)
	}
	for i, h := range o.Headers() {
		if h.Get("User-Agent") != "ExampleBot/1.0" {
			continue // the proxy's own robots.txt fetch, never signed
		}
		if got := h.Values("Signature-Input"); len(got) != 1 || len(h.Values("Signature")) != 1 {
			t.Errorf("request %d carries Signature-Input %q: want exactly our one signature", i, got)
		}
	}
	line := ts.audit.WaitLines(t, 1)
	var found bool
	for _, l := range line {
		if l["url"] == o.URL+"/page" {
			found = true
			if l["signature_keyid"] != key.ID || l["charged"] != "0.01" || l["currency"] != "USD" {
				t.Errorf("audit line %v: want signature_keyid %s, charged 0.01 USD", l, key.ID)
			}
		}
	}
	if !found {
		t.Errorf("no audit line for %s in %v", o.URL+"/page", line)
	}
}

// coveredNames returns the component names the signature label of r
// covers, from its Signature-Input.
func coveredNames(r *http.Request, label string) ([]string, error) {
	d, err := httpsfv.UnmarshalDictionary(r.Header.Values("Signature-Input"))
	if err != nil {
		return nil, err
	}
	m, ok := d.Get(label)
	il, isList := m.(httpsfv.InnerList)
	if !ok || !isList {
		return nil, fmt.Errorf("no Signature-Input member %q", label)
	}
	var names []string
	for _, it := range il.Items {
		s, _ := it.Value.(string)
		names = append(names, s)
	}
	return names, nil
}

// verifyWith verifies r's robotsproxy signature with k over fields, with
// github.com/yaronf/httpsign.
func verifyWith(r *http.Request, k *signing.Key, fields httpsign.Fields) error {
	v, err := httpsign.NewEd25519Verifier(k.Public, httpsign.NewVerifyConfig().SetKeyID(k.ID).SetAllowedTags([]string{signing.Tag}), fields)
	if err != nil {
		return err
	}
	return httpsign.VerifyRequest("robotsproxy", *v, r)
}
