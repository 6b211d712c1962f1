package server

import (
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/access"
	"github.com/robotsproxy/robotsproxy/audit"
	"github.com/robotsproxy/robotsproxy/config"
	"github.com/robotsproxy/robotsproxy/robots"
)

// openArchive opens the robots.txt archive of audit.archive_dir, nil when
// it is off.
func openArchive(cfg config.Config, logger zerolog.Logger) (*audit.Archive, error) {
	if cfg.Audit.ArchiveDir == "" {
		return nil, nil
	}
	return audit.OpenArchive(audit.ArchiveOptions{
		Dir:        cfg.Audit.ArchiveDir,
		MaxBytes:   int64(cfg.Audit.ArchiveMaxMB) << 20,
		ParseLimit: robots.Options{MaxBytes: cfg.Robots.MaxBytes}.Limit(),
		Log:        logger,
	})
}

// archiveFetch records a fetch in the archive (when there is one), then
// drops the body's text: the cache keeps the compiled rules only. An
// archive failure is logged; the fetch stands (the decision's line is then
// unverifiable, not wrong).
func archiveFetch(ar *audit.Archive, a access.Access, logger zerolog.Logger) access.Access {
	if ar != nil {
		if err := ar.Record(a); err != nil {
			logger.Error().Err(err).Str("robots_url", a.URL).Msg("robots.txt archive: the fetch is not archived")
		}
	}
	a.Raw = nil
	return a
}
