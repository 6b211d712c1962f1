package check

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// LicenseResult is the RSL license that applies to a URL (Result.License):
// the first License line of robots.txt and, when its document was given
// (-license FILE; check reads nothing from the network), what it says of
// the URL for the -usage purpose, or for every purpose without one.
type LicenseResult struct {
	// URL is the License line's value, Line its line number.
	URL  string `json:"url"`
	Line int    `json:"line"`
	// SHA256 is the SHA-256 of the license document read, in hex.
	SHA256 string `json:"sha256,omitempty"`
	// Element is the content element that applies.
	Element string `json:"element,omitempty"`
	// Server is that element's License Server.
	Server string `json:"server,omitempty"`
	// Decision is what the license says (policy.LicenseDecision): omitted
	// when no license document was given.
	Decision string `json:"decision,omitempty"`
	// Refused is the first purpose it prohibits.
	Refused string `json:"refused,omitempty"`
	// Purposes are the purposes decided for.
	Purposes []string `json:"purposes,omitempty"`
	// Error is why the license document could not be read.
	Error string `json:"error,omitempty"`
}

// licenseInput is the license check decides with: robots.txt's first
// License line and the document read from -license, if any.
type licenseInput struct {
	ref robots.License
	doc *policy.Access // nil when no document was given
}

// readLicense reads the first License line of r and the document at
// path ("" for none), at most license.DefaultMaxBytes octets: a document
// that is larger or does not parse is decided as unreadable, as the
// proxy does. nil when robots.txt names no license and no path is given.
func readLicense(r *robots.Robots, path string) (*licenseInput, error) {
	refs := r.Licenses()
	if len(refs) == 0 && path == "" {
		return nil, nil
	}
	in := &licenseInput{}
	if len(refs) > 0 {
		in.ref = refs[0]
	}
	if path == "" {
		return in, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read license: %w", err)
	}
	defer f.Close()
	body, err := io.ReadAll(io.LimitReader(f, license.DefaultMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read license: %w", err)
	}
	a := &policy.Access{Result: policy.Unreachable, SHA256: sha256.Sum256(body)}
	switch lic, perr := license.Parse(body); {
	case len(body) > license.DefaultMaxBytes:
		a.Err = fmt.Errorf("license %s: larger than %d octets", path, license.DefaultMaxBytes)
	case perr != nil:
		a.Err = fmt.Errorf("license %s: %w", path, perr)
	default:
		a.Result, a.Doc = policy.Successful, lic
	}
	in.doc = a
	return in, nil
}

// result decides the license for URL u whose path the proxy reads as p.
func (in *licenseInput) result(u, p, purpose string) *LicenseResult {
	res := &LicenseResult{URL: in.ref.URL, Line: in.ref.Line}
	if in.doc == nil {
		return res
	}
	purposes := policy.Purposes()
	if policy.IsPurpose(purpose) {
		purposes = []string{purpose}
	}
	host := ""
	if pu, err := url.Parse(u); err == nil {
		host = pu.Host
	}
	l := license.Decide(in.doc, in.ref, host, p, purposes)
	res.SHA256 = hex.EncodeToString(in.doc.SHA256[:])
	res.Element, res.Server, res.Decision, res.Refused, res.Purposes = l.Element, l.Server, string(l.Decision), l.Refused, purposes
	if l.Err != nil {
		res.Error = l.Err.Error()
	}
	return res
}

// licensePath is the path a URL's license is decided for: the reading
// that decided, else the path as sent.
func licensePath(u, resolved string) string {
	if resolved != "" {
		return resolved
	}
	return policy.RequestPath(u)
}
