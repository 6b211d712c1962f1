package server

import (
	"fmt"
	"net"
	"net/url"
	"slices"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/config"
)

// logStartup writes the one line that says, at start, what is in force:
// the mode, the configuration file, the listeners' addresses, the audit
// log, the archive, interception (and how a client trusts its CA, or what
// host-level gives up), the fleet store (scheme and host only:
// never credentials), signing, and the politeness and usage switches.
func (s *Server) logStartup(names []string, lns []net.Listener) {
	c := s.cfg
	listeners := zerolog.Dict()
	for i, ln := range lns {
		listeners.Str(names[i], ln.Addr().String())
	}
	if !slices.Contains(names, "admin") {
		listeners.Str("admin", "off")
	}
	file := s.run.ConfigFile
	if file == "" {
		file = "none (built-in defaults)"
	}
	auditLog := c.Log.File
	if auditLog == "" {
		auditLog = "stdout"
	}
	archive := c.Audit.ArchiveDir
	if archive == "" {
		archive = "off"
	}
	ca := "off"
	if s.https.config != nil {
		ca = "on"
	}
	var purposes []string
	for token := range c.Usage.Purposes {
		purposes = append(purposes, token)
	}
	slices.Sort(purposes)
	ev := s.log.Info().
		Str("version", s.run.Version).
		Str("mode", c.Mode).
		Str("config", file).
		Dict("listeners", listeners).
		Str("audit_log", auditLog).
		Bool("audit_chain", c.Audit.Chain).
		Str("archive", archive).
		Str("ca", ca).
		Dict("https", s.httpsSummary()).
		Str("fleet_store", redactStore(c.Shared.RedisURL)).
		Str("signing", signingSummary(c.Signing)).
		Bool("allow_private", c.AllowPrivate).
		Bool("allow_open_proxy", c.AllowOpenProxy).
		Dict("politeness", zerolog.Dict().
			Str("crawl_delay", c.Politeness.CrawlDelay).
			Str("backoff", c.Politeness.Backoff).
			Str("on_early", c.Politeness.OnEarly).
			Int("max_concurrent_per_host", c.Politeness.MaxConcurrentPerHost)).
		Dict("usage", zerolog.Dict().
			Bool("enforce", c.Usage.Enforce).
			Strs("purposes_for", purposes))
	ev.Msg("started")
}

// httpsSummary says how HTTPS is enforced: with interception the CA's
// file, fingerprint, where it came from and the line that makes a client
// trust it; host-level, what that gives up.
func (s *Server) httpsSummary() *zerolog.Event {
	h := s.https
	d := zerolog.Dict().Str("mitm_mode", h.mode)
	if h.config == nil {
		return d.Str("gives_up", HostLevelGivesUp)
	}
	return d.Str("ca_cert", h.certFile).Str("ca_source", h.source).Str("sha256", h.fingerprint).Str("trust", TrustHint(h.certFile))
}

// redactStore returns the fleet store's URL as scheme://host only, "off"
// for none: user names, passwords, paths and query options are dropped.
func redactStore(raw string) string {
	if raw == "" {
		return "off"
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return "(unparsable)"
	}
	return u.Scheme + "://" + u.Host
}

// signingSummary says whether requests are signed: "off", or "on" and
// how many identities have keys.
func signingSummary(s config.Signing) string {
	if !s.Enabled {
		return "off"
	}
	return fmt.Sprintf("on (%d identities)", len(s.Identities))
}
