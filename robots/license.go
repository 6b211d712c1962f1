package robots

import "net/url"

// License is a License record of robots.txt: RSL 1.0 (Really Simple
// Licensing, rslstandard.org) names the site's license document with a
// "License: <absolute URL>" line. Like Sitemap it is a file-level record
// (RFC 9309 2.2.4): it applies to every crawler wherever it appears, in a
// group or before the first, and never ends a group.
type License struct {
	// URL is the value as written: an absolute http or https URL.
	URL string
	// Line is the 1-based line number.
	Line int
}

// HasLicense reports whether the file has any License record, whatever its
// value: a file without one names no license, and Licenses need not be
// called. It does not allocate.
func (r *Robots) HasLicense() bool { return r.extras&xLicense != 0 }

// Licenses returns the License records whose value is an absolute http or
// https URL with a host, in file order, without repeats; other values
// (relative references, other schemes) are left out, as SitemapURLs does.
// Records lists every License line as written (key "license"). It
// allocates; it returns nil at once when HasLicense is false.
func (r *Robots) Licenses() []License {
	if !r.HasLicense() {
		return nil
	}
	var out []License
	r.eachRecord(func(kind byte, rec Record) {
		if kind != recLicense {
			return
		}
		u, err := url.Parse(rec.Value)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
			return
		}
		for _, l := range out {
			if l.URL == rec.Value {
				return
			}
		}
		out = append(out, License{URL: rec.Value, Line: rec.Line})
	})
	return out
}
