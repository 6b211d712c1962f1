package server

import (
	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/config"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/policy"
)

// openArchive opens the robots.txt archive of audit.archive_dir, nil when
// it is off.
func openArchive(cfg config.Config, logger zerolog.Logger) (*audit.Archive, error) {
	if cfg.Audit.ArchiveDir == "" {
		return nil, nil
	}
	o := ArchiveOptions(cfg)
	o.Log = logger
	return audit.OpenArchive(o)
}

// archiveFetch records a fetch in the archive (when there is one), then
// drops the body's text: the cache keeps the compiled rules only. An
// archive failure is logged; the fetch stands (the decision's line is then
// unverifiable, not wrong).
func archiveFetch(ar *audit.Archive, a policy.Access, logger zerolog.Logger) policy.Access {
	if ar != nil {
		if err := ar.Record(a); err != nil {
			logger.Error().Err(err).Str("robots_url", a.URL).Msg("robots.txt archive: the fetch is not archived")
		}
	}
	a.Raw = nil
	return a
}

// licenseSource returns the source of the RSL licenses robots.txt files
// name: fetched by the robots.txt fetcher (its guard, timeouts and user
// agent), at most robots.max_bytes octets each, cached in a cache of their
// own with the robots.txt cache's bounds and TTL rules, and archived like
// robots.txt bodies (by SHA-256) when the archive is on.
func licenseSource(cfg config.Config, f *access.Fetcher, ar *audit.Archive, logger zerolog.Logger) *license.Source {
	o := LicenseOptions(cfg)
	o.Fetcher = f
	o.Record = func(a policy.Access) policy.Access { return archiveFetch(ar, a, logger) }
	return license.NewSource(o)
}
