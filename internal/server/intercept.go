package server

import (
	"crypto/tls"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/elazarl/goproxy"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
	"golang.org/x/time/rate"

	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/mitm"
)

// HostLevelGivesUp is what mitm.mode host-level gives up, as the startup
// line and the documentation say it.
const HostLevelGivesUp = "tunnels are not intercepted: each HTTPS tunnel is decided once, for \"/\" of its host, under the CONNECT's own User-Agent (most clients send none), and the paths inside are never checked against robots.txt"

// intercepted is how HTTPS is enforced: the mode, and with interception
// the CA and where it came from.
type intercepted struct {
	mode        string // config.MITMIntercept or config.MITMHostLevel
	certFile    string // the CA certificate file, "" for host-level
	fingerprint string // SHA-256 of the CA certificate's DER, colon hex
	source      string // "mitm.ca_cert", "data_dir (created)", "data_dir"
	config      func(string, *goproxy.ProxyCtx) (*tls.Config, error)
}

// TrustHint is the one line a client needs to trust the CA in certFile.
func TrustHint(certFile string) string {
	return fmt.Sprintf("curl --cacert %[1]s (Python requests: REQUESTS_CA_BUNDLE=%[1]s; Node: NODE_EXTRA_CA_CERTS=%[1]s; Go: SSL_CERT_FILE=%[1]s; \"robotsproxy ca show\" prints more)", certFile)
}

// interception returns how tunnels are enforced (mitm.mode): host-level
// (config nil), or intercepted with the operator's CA (mitm.ca_cert) or,
// without one, the CA kept in the data directory, created there on first
// start (mitm.DataDirCA). getenv resolves the default data directory.
func interception(cfg config.Config, getenv func(string) string, reg prometheus.Registerer, logger zerolog.Logger) (intercepted, error) {
	m := cfg.MITM
	if m.Mode == config.MITMHostLevel {
		logger.Warn().Str("mitm_mode", m.Mode).Str("gives_up", HostLevelGivesUp).
			Msg("mitm.mode host-level: CONNECT tunnels get a host-level decision; the paths of HTTPS requests are not checked")
		return intercepted{mode: m.Mode}, nil
	}
	in := intercepted{mode: config.MITMIntercept, certFile: m.CACert, source: "mitm.ca_cert"}
	var ca *mitm.CA
	var err error
	if m.CACert != "" {
		ca, err = mitm.LoadCA(m.CACert, m.CAKey)
	} else {
		var dir string
		var created bool
		if dir, err = cfg.ResolveDataDir(getenv); err == nil {
			ca, in.certFile, created, err = mitm.DataDirCA(dir)
		}
		in.source = "data_dir"
		if created {
			in.source = "data_dir (created)"
		}
	}
	if err != nil {
		return in, fmt.Errorf("mitm: %w", err)
	}
	certs, err := mitm.NewCerts(ca, mitm.CertsOptions{MaxEntries: m.MaxCerts})
	if err != nil {
		return in, fmt.Errorf("mitm: %w", err)
	}
	registerCertMetrics(reg, certs.Stats)
	in.fingerprint, in.config = ca.Fingerprint(), certs.TLSConfig
	logger.Info().Str("ca", ca.Certificate().Subject.CommonName).Str("ca_cert", in.certFile).
		Str("ca_source", in.source).Str("sha256", in.fingerprint).Str("trust", TrustHint(in.certFile)).
		Msg("intercepting CONNECT tunnels: every HTTPS request is decided on its path; clients must trust the CA")
	return in, nil
}

// untrustedInterval is the least time between two "client does not trust
// the CA" lines about one client address.
const untrustedInterval = time.Minute

// untrustedLog returns proxy.Options.OnUntrusted: a warning naming the
// client, the host and the fix, at most one per client address per
// untrustedInterval (and at most untrustedClients addresses remembered).
// Nil without interception.
func untrustedLog(logger zerolog.Logger, in intercepted) func(client netip.Addr, host string, err error) {
	if in.config == nil {
		return nil
	}
	lim := &perClient{limiters: map[netip.Addr]*rate.Limiter{}}
	return func(client netip.Addr, host string, err error) {
		if !lim.allow(client) {
			return
		}
		logger.Warn().Str("client", client.String()).Str("host", host).Str("ca_cert", in.certFile).
			Str("fix", TrustHint(in.certFile)).AnErr("error", err).
			Msg("a client refused the interception certificate (it ended the TLS handshake after it): it most likely does not trust the proxy's CA, so its HTTPS requests fail")
	}
}

// untrustedClients bounds the client addresses perClient remembers.
const untrustedClients = 4096

// perClient is one token bucket per client address.
type perClient struct {
	mu       sync.Mutex
	limiters map[netip.Addr]*rate.Limiter
}

func (p *perClient) allow(a netip.Addr) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	l, ok := p.limiters[a]
	if !ok {
		if len(p.limiters) >= untrustedClients {
			clear(p.limiters) // forget them all: at worst one more line each
		}
		l = rate.NewLimiter(rate.Every(untrustedInterval), 1)
		p.limiters[a] = l
	}
	return l.Allow()
}
