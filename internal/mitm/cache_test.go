package mitm

import (
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

func mustCerts(t *testing.T, ca *CA, opts CertsOptions) *Certs {
	t.Helper()
	c, err := NewCerts(ca, opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCertsConcurrentSameHost(t *testing.T) {
	const n = 500
	certs := mustCerts(t, mustCA(t, time.Now()), CertsOptions{})
	var (
		start   = make(chan struct{})
		wg      sync.WaitGroup
		results [n]*tls.Certificate
		errs    [n]error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = certs.Get("burst.example.test:443")
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Get %d: %v", i, errs[i])
		}
		if results[i] != results[0] {
			t.Fatalf("Get %d returned a different certificate", i)
		}
	}
	s := certs.Stats()
	t.Logf("500-connection burst: %+v, hit rate %.3f", s, s.HitRate())
	if s.Signed != 1 || s.Hits+s.Misses != n || s.Hits+(s.Misses-s.Signed) != n-1 || s.Errors != 0 || s.Entries != 1 {
		t.Errorf("stats %+v, want Signed 1, Hits+Misses %d, Errors 0, Entries 1", s, n)
	}
}

// gatedReader blocks every Read until open is closed, then reads from
// crypto/rand. It holds the signing Get inside singleflight.
type gatedReader struct{ open chan struct{} }

func (g gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return rand.Read(p)
}

// TestCertsConcurrentWhileSigning holds the first signing until all 500
// Gets have missed the cache, so all but one must share its result.
func TestCertsConcurrentWhileSigning(t *testing.T) {
	const n = 500
	gate := gatedReader{open: make(chan struct{})}
	certs := mustCerts(t, mustCA(t, time.Now()), CertsOptions{Rand: gate})
	var wg sync.WaitGroup
	results := make(chan *tls.Certificate, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cert, err := certs.Get("burst.example.test")
			if err != nil {
				t.Error(err)
			}
			results <- cert
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for certs.Stats().Misses < n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	close(gate.open)
	wg.Wait()
	close(results)
	first := <-results
	for c := range results {
		if c != first {
			t.Fatal("Gets returned different certificates")
		}
	}
	want := CertStats{Hits: 0, Misses: n, Signed: 1, Entries: 1}
	if s := certs.Stats(); s != want {
		t.Errorf("stats %+v, want %+v", s, want)
	}
}

func TestCertsBound(t *testing.T) {
	certs := mustCerts(t, mustCA(t, time.Now()), CertsOptions{MaxEntries: 8})
	for i := range 50 {
		if _, err := certs.Get(fmt.Sprintf("h%d.example.test", i)); err != nil {
			t.Fatal(err)
		}
	}
	s := certs.Stats()
	if s.Entries != 8 || s.Evictions != 42 || s.Signed != 50 || s.Misses != 50 || s.Hits != 0 {
		t.Errorf("stats %+v, want Entries 8, Evictions 42, Signed 50, Misses 50", s)
	}
	if certs.cache.len() != 8 {
		t.Errorf("cache holds %d entries", certs.cache.len())
	}
}

// TestCertsLRU checks that the least recently used entry is evicted.
func TestCertsLRU(t *testing.T) {
	certs := mustCerts(t, mustCA(t, time.Now()), CertsOptions{MaxEntries: 3})
	steps := []struct {
		host          string
		signed, hits  uint64
		wantEvictions uint64
	}{
		{"a.test", 1, 0, 0},
		{"b.test", 2, 0, 0},
		{"c.test", 3, 0, 0},
		{"a.test", 3, 1, 0}, // a is now most recently used
		{"d.test", 4, 1, 1}, // evicts b
		{"a.test", 4, 2, 1},
		{"c.test", 4, 3, 1},
		{"b.test", 5, 3, 2}, // b was evicted: re-signed, evicts d
		{"d.test", 6, 3, 3},
	}
	for i, st := range steps {
		if _, err := certs.Get(st.host); err != nil {
			t.Fatal(err)
		}
		s := certs.Stats()
		if s.Signed != st.signed || s.Hits != st.hits || s.Evictions != st.wantEvictions {
			t.Errorf("step %d (%s): stats %+v, want Signed %d Hits %d Evictions %d", i, st.host, s, st.signed, st.hits, st.wantEvictions)
		}
	}
}

func TestCertsExpiry(t *testing.T) {
	clock := testkit.NewClock(t0)
	certs := mustCerts(t, mustCA(t, t0), CertsOptions{Now: clock.Now})
	first, err := certs.Get("example.test")
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		advance   time.Duration
		host      string
		wantNew   bool
		wantStats CertStats
	}{
		// Case, port and trailing dot share the cache entry.
		{0, "EXAMPLE.test:443", false, CertStats{Hits: 1, Misses: 1, Signed: 1, Entries: 1}},
		{6*24*time.Hour - time.Second, "example.test.", false, CertStats{Hits: 2, Misses: 1, Signed: 1, Entries: 1}},
		// 24h (RenewBefore) before NotAfter the entry is stale.
		{time.Second, "example.test", true, CertStats{Hits: 2, Misses: 2, Signed: 2, Entries: 1}},
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		got, err := certs.Get(st.host)
		if err != nil {
			t.Fatal(err)
		}
		if (got != first) != st.wantNew {
			t.Errorf("step %d: new certificate = %v, want %v", i, got != first, st.wantNew)
		}
		if s := certs.Stats(); s != st.wantStats {
			t.Errorf("step %d: stats %+v, want %+v", i, s, st.wantStats)
		}
		if st.wantNew && !got.Leaf.NotBefore.Equal(clock.Now().Add(-time.Hour)) {
			t.Errorf("step %d: re-signed leaf NotBefore %v, want now-1h", i, got.Leaf.NotBefore)
		}
	}
}

// TestCertsShortLivedCA checks that leaves capped by a CA about to expire
// are still cached, for half their remaining lifetime.
func TestCertsShortLivedCA(t *testing.T) {
	clock := testkit.NewClock(t0)
	ca, err := NewCA(CAOptions{Now: clock.Now, Validity: 10 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	certs := mustCerts(t, ca, CertsOptions{Now: clock.Now})
	for _, st := range []struct {
		advance    time.Duration
		wantSigned uint64
	}{{0, 1}, {5*time.Hour - time.Second, 1}, {time.Second, 2}} {
		clock.Advance(st.advance)
		if _, err := certs.Get("example.test"); err != nil {
			t.Fatal(err)
		}
		if s := certs.Stats(); s.Signed != st.wantSigned {
			t.Errorf("at +%v: Signed %d, want %d", clock.Now().Sub(t0), s.Signed, st.wantSigned)
		}
	}
	clock.Advance(6 * time.Hour) // CA expired
	_, err = certs.Get("example.test")
	wantErr(t, err, "CA certificate expired")
	if s := certs.Stats(); s.Errors != 1 {
		t.Errorf("Errors = %d, want 1", s.Errors)
	}
}

func TestCertsInvalidHostStats(t *testing.T) {
	certs := mustCerts(t, mustCA(t, time.Now()), CertsOptions{})
	if _, err := certs.Get("bad host"); err == nil {
		t.Fatal("no error")
	}
	if s := certs.Stats(); s != (CertStats{Errors: 1}) {
		t.Errorf("stats %+v, want only Errors 1", s)
	}
}

func TestNewCertsErrors(t *testing.T) {
	ca := mustCA(t, time.Now())
	tests := []struct {
		name string
		ca   *CA
		opts CertsOptions
		want string
	}{
		{"nil CA", nil, CertsOptions{}, "CA is nil"},
		{"negative MaxEntries", ca, CertsOptions{MaxEntries: -1}, "negative"},
		{"negative LeafValidity", ca, CertsOptions{LeafValidity: -time.Hour}, "negative"},
		{"negative RenewBefore", ca, CertsOptions{RenewBefore: -time.Hour}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewCerts(tt.ca, tt.opts)
			wantErr(t, err, tt.want)
		})
	}
}

func TestHitRate(t *testing.T) {
	for _, tt := range []struct {
		s    CertStats
		want float64
	}{{CertStats{}, 0}, {CertStats{Hits: 3, Misses: 1}, 0.75}, {CertStats{Misses: 2}, 0}} {
		if got := tt.s.HitRate(); got != tt.want {
			t.Errorf("%+v.HitRate() = %v, want %v", tt.s, got, tt.want)
		}
	}
}
