package proxy_test

import (
	"crypto/rand"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// benchSigner returns the signing egress step around next, signing every
// request with one key (the default identity's).
func benchSigner(b *testing.B, next http.RoundTripper) http.RoundTripper {
	b.Helper()
	k, err := signing.GenerateKeyDir(filepath.Join(b.TempDir(), "key"), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	a := &signing.Agent{Keys: []*signing.Key{k}, Active: k, URL: "https://crawler.example"}
	return signing.NewTransport(next, &signing.Settings{Agents: egress.Table[*signing.Agent]{Default: &a}, All: []*signing.Agent{a}})
}

// BenchmarkSigningThroughput is the paired throughput benchmark of
// signing: robotsproxy as deployed (audit log with the hash chain) without
// and with signing, over plain HTTP and inside intercepted tunnels, 32
// connections. Compare with benchstat over interleaved runs:
//
//	go test -c -o /tmp/proxy.test ./proxy/
//	for i in $(seq 6); do /tmp/proxy.test -test.run '^$' -test.bench SigningThroughput >> /tmp/sig.txt; done
//	benchstat -col /proxy /tmp/sig.txt
func BenchmarkSigningThroughput(b *testing.B) {
	for _, c := range []struct {
		name      string
		intercept bool
	}{{"allowed/body=100B", false}, {"intercepted/body=100B", true}} {
		for _, kind := range []string{"robotsproxy", "robotsproxy-signing"} {
			b.Run(c.name+"/proxy="+kind, func(b *testing.B) {
				o := benchOrigin(b, c.intercept)
				bp := newBenchProxy(b, kind, o, c.intercept)
				runThroughput(b, bp, o.URL+"/size/100", 100, 200)
			})
		}
	}
}
