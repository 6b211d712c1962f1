package server

import (
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/yaronf/httpsign"

	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// keyOrigin verifies each request's signature against the keys it knows
// (by keyid), holding each request for a while so that requests are in
// flight when a reload comes; it counts the keyids seen and the failures.
type keyOrigin struct {
	*httptest.Server
	keys     map[string]ed25519.PublicKey
	mu       sync.Mutex
	byKey    map[string]int
	failures []string
}

func newKeyOrigin(t *testing.T, hold time.Duration, keys ...*signing.Key) *keyOrigin {
	t.Helper()
	o := &keyOrigin{keys: map[string]ed25519.PublicKey{}, byKey: map[string]int{}}
	for _, k := range keys {
		o.keys[k.ID] = k.Public
	}
	o.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
			return
		}
		time.Sleep(hold)
		id, err := o.verify(r)
		o.mu.Lock()
		if err != nil {
			o.failures = append(o.failures, r.URL.Path+": "+err.Error())
		} else {
			o.byKey[id]++
		}
		o.mu.Unlock()
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(o.Close)
	return o
}

func (o *keyOrigin) verify(r *http.Request) (string, error) {
	d, err := httpsign.RequestDetails("robotsproxy", r)
	if err != nil || d.KeyID == nil {
		return "", fmt.Errorf("no signature: %v", err)
	}
	pub, ok := o.keys[*d.KeyID]
	if !ok {
		return "", fmt.Errorf("unknown keyid %s", *d.KeyID)
	}
	fields := httpsign.Headers("@authority", "@method", "@path")
	fields.AddDictHeader("signature-agent", "robotsproxy")
	v, err := httpsign.NewEd25519Verifier(pub, nil, fields)
	if err != nil {
		return "", err
	}
	return *d.KeyID, httpsign.VerifyRequest("robotsproxy", *v, r)
}

func (o *keyOrigin) counts() (map[string]int, []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	m := map[string]int{}
	for k, v := range o.byKey {
		m[k] = v
	}
	return m, append([]string(nil), o.failures...)
}

func signingYAML(keys []string, active string) string {
	return fmt.Sprintf("signing:\n  enabled: true\n  identities:\n    - product_token: ExampleBot\n      keys: [%s]\n      active: %s\n      signature_agent: https://crawler.example\n",
		strings.Join(keys, ", "), active)
}

// TestReloadSwapsKeysInFlight: requests keep flowing while a reload makes
// another key active; none fails, each is signed by the old or the new
// key, and the requests after the reload by the new one. A broken key
// refuses the reload; signing.enabled needs a restart.
func TestReloadSwapsKeysInFlight(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	var keys []*signing.Key
	for _, name := range []string{"old", "new"} {
		d := filepath.Join(dir, name)
		k, err := signing.GenerateKeyDir(d, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		dirs, keys = append(dirs, d), append(keys, k)
	}
	o := newKeyOrigin(t, 10*time.Millisecond, keys...)
	rs := startReloadServer(t, signingYAML(dirs, dirs[0]))
	proxyURL, _ := url.Parse("http://" + rs.addr)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL), MaxIdleConnsPerHost: 8}, Timeout: 10 * time.Second}
	get := func(path string) error {
		req, _ := http.NewRequest("GET", o.URL+path, nil)
		req.Header.Set("User-Agent", "ExampleBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("%s: status %d", path, resp.StatusCode)
		}
		return nil
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				if err := get(fmt.Sprintf("/w%d/%d", w, i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	if got := rs.reloadWith(t, signingYAML(dirs, dirs[1])); got != "applied" {
		t.Fatalf("reload to the new key: %s; log:\n%s", got, rs.logText())
	}
	time.Sleep(100 * time.Millisecond)
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("request during the reload: %v", err)
	}
	before, failures := o.counts()
	if len(failures) > 0 {
		t.Errorf("signatures that did not verify: %q", failures)
	}
	if before[keys[0].ID] == 0 || before[keys[1].ID] == 0 {
		t.Errorf("signed by old %d, new %d: want both", before[keys[0].ID], before[keys[1].ID])
	}
	if err := get("/after"); err != nil {
		t.Fatal(err)
	}
	after, _ := o.counts()
	if after[keys[1].ID] != before[keys[1].ID]+1 {
		t.Errorf("the request after the reload was not signed by the new key: %v then %v", before, after)
	}

	// A key directory that no longer holds a key refuses the reload.
	if got := rs.reloadWith(t, signingYAML(append(dirs, filepath.Join(dir, "missing")), dirs[1])); got != "refused" {
		t.Errorf("reload with a missing key: %s, want refused", got)
	}
	if !strings.Contains(rs.logText(), "signing.identities[0].keys[2]") {
		t.Errorf("the refusal does not name the key; log:\n%s", rs.logText())
	}
	// signing.enabled is restart-only: turning it off keeps signing.
	if got := rs.reloadWith(t, "signing:\n  enabled: false\n"); got != "refused" {
		// enabled stays true, and then the identities are missing.
		t.Errorf("reload turning signing off: %s, want refused (signing.enabled needs a restart)", got)
	}
	if err := get("/last"); err != nil {
		t.Fatal(err)
	}
	last, failures := o.counts()
	if last[keys[1].ID] != after[keys[1].ID]+1 || len(failures) > 0 {
		t.Errorf("after the refused reloads: %v, failures %q; want signed by the new key", last, failures)
	}
}
