package server

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
)

// keyDirectory is the Web Bot Auth key directory and Signature Agent
// Cards of the signing identities: served on signing.directory_listen,
// archived (audit.archive_dir) at each start and reload so that audit
// verify can check every signature_keyid.
type keyDirectory struct {
	srv *signing.DirectoryServer // what the listener serves; swapped on reload
}

// publishDirectory builds the directory of the signing identities of
// cfg from their keys as st read them (the signer's): nil when signing is
// off (st nil).
func publishDirectory(cfg config.Config, st *signing.Settings) (*signing.Published, error) {
	if st == nil {
		return nil, nil
	}
	entries, err := DirectoryEntries(cfg.Signing, st)
	if err != nil {
		return nil, err
	}
	p, err := signing.Publish(entries, cfg.Signing.DirectoryAuthorities...)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return p, nil
}

// newKeyDirectory starts the key directory of p (nil: none), whose keys
// were read at read: archives it as at event ("start", or "reload" when
// a reload turned signing on) and returns what the listener serves.
func newKeyDirectory(p *signing.Published, ar *audit.Archive, event string, read time.Time, logger zerolog.Logger) *keyDirectory {
	if p == nil {
		return nil
	}
	d := &keyDirectory{srv: signing.NewDirectoryServer(p, signing.DirectoryOptions{Log: logger})}
	archiveKeys(ar, p, event, read, logger)
	return d
}

// reloadDirectory swaps in the directory a reload built (nil: none)
// from keys read at read, and archives it as seen from then (before the
// signer could sign with them); the listener, started or not at start,
// stays as it is.
func (s *Server) reloadDirectory(p *signing.Published, read time.Time) {
	switch {
	case p == nil:
	case s.keys == nil:
		s.keys = newKeyDirectory(p, s.archive, "reload", read, s.log)
	default:
		s.keys.srv.Set(p)
		archiveKeys(s.archive, p, "reload", read, s.log)
	}
}

// handler returns what the directory listener serves.
func (d *keyDirectory) handler() http.Handler { return d.srv }

// archiveKeys records the directory in the archive, when there is one, as
// seen from read.
// A failure is logged: the keys' lines are then unverifiable, not wrong.
func archiveKeys(ar *audit.Archive, p *signing.Published, event string, read time.Time, logger zerolog.Logger) {
	if ar == nil {
		return
	}
	if err := ar.RecordKeys(p.Body(), read, event); err != nil {
		logger.Error().Err(err).Str("event", event).Msg("key archive: the key directory is not archived: signed lines will not verify")
	}
}

// listenDirectory opens the key directory's listener
// (signing.directory_listen) into s.dirLn, when one is set and there is a
// directory to serve.
func (s *Server) listenDirectory() error {
	addr := s.cfg.Signing.DirectoryListen
	if addr == "" {
		return nil
	}
	if s.keys == nil {
		s.log.Warn().Str("directory_listen", addr).Msg("signing.directory_listen is set but signing is off (signing.enabled): no key directory is served")
		return nil
	}
	ln, err := listen("directory", "signing.directory_listen", "", addr)
	if err != nil {
		return err
	}
	s.dirLn = ln
	return nil
}

// directoryServer is the HTTP server of the key directory listener, with
// the client limits (serviceServer); its requests are counted in
// robotsproxy_key_directory_requests_total.
func (s *Server) directoryServer(base context.Context) *http.Server {
	h := s.keys.handler()
	if s.ops != nil {
		h = promhttp.InstrumentHandlerCounter(s.ops.directory, h)
	}
	return serviceServer(h, base, s.cfg.Client)
}
