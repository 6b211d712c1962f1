package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// registerCertMetrics exports the leaf-certificate cache of an
// intercepting proxy (see package mitm): stats is called at each scrape.
func registerCertMetrics(reg prometheus.Registerer, stats func() mitm.CertStats) {
	counter := func(name, help string, f func(mitm.CertStats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(f(stats())) })
	}
	reg.MustRegister(
		counter("robotsproxy_mitm_cert_hits_total", "Leaf certificates served from the cache.",
			func(s mitm.CertStats) uint64 { return s.Hits }),
		counter("robotsproxy_mitm_cert_misses_total", "Leaf certificate lookups that missed the cache.",
			func(s mitm.CertStats) uint64 { return s.Misses }),
		counter("robotsproxy_mitm_certs_signed_total", "Leaf certificates signed with the operator's CA.",
			func(s mitm.CertStats) uint64 { return s.Signed }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "robotsproxy_mitm_cached_certs", Help: "Leaf certificates in the cache."},
			func() float64 { return float64(stats().Entries) }),
	)
}
