package signing

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// ErrAuthority is the error of a directory or card response asked for
// an authority the directory does not vouch for: the signatures of a
// directory cover "@authority" so that nobody can re-serve it as theirs
// (draft-ietf-webbotauth-httpsig-protocol-01, appendix "Possession Proof
// on the Directory Response"), so signing it for any Host would defeat
// them.
var ErrAuthority = errors.New("not an authority of the key directory (signature_agent hosts and signing.directory_authorities)")

// CheckAuthority checks an authority given in the configuration or on
// the command line (rules.CheckAuthority): HOST or HOST:PORT.
func CheckAuthority(s string) error { return rules.CheckAuthority(s) }

// AgentAuthority returns the authority of a Signature-Agent URL (its
// host, and port when not 443), normalized as NormalizeAuthority does.
func AgentAuthority(agentURL string) (string, error) {
	u, err := url.Parse(agentURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("signature agent %q names no authority", agentURL)
	}
	return NormalizeAuthority(u.Host, "https")
}

// directoryAuthorities returns the authorities of agents' SignatureAgent
// URLs and extra, normalized for https.
func directoryAuthorities(agents []Entry, extra []string) (map[string]bool, error) {
	set := map[string]bool{}
	for _, a := range agents {
		if a.SignatureAgent == "" {
			continue
		}
		auth, err := AgentAuthority(a.SignatureAgent)
		if err != nil {
			return nil, fmt.Errorf("key directory: identity %q: %w", a.Slug, err)
		}
		set[auth] = true
	}
	for _, e := range extra {
		if err := CheckAuthority(e); err != nil {
			return nil, fmt.Errorf("key directory: authority: %w", err)
		}
		auth, _ := NormalizeAuthority(e, "https")
		set[auth] = true
	}
	return set, nil
}

// Serves reports whether the directory and cards may be signed for
// authority (a request's Host normalized by NormalizeAuthority): one that
// an agent's SignatureAgent URL or an extra authority given to Publish
// names, compared in lower case. An IP address is served only when named.
func (p *Published) Serves(authority string) bool {
	if p.authorities[strings.ToLower(authority)] {
		return true
	}
	// A Host of an https authority sent with its port (host:443) to a
	// plain listener behind a TLS terminator.
	if h, port, err := net.SplitHostPort(authority); err == nil && port == "443" {
		return p.authorities[strings.ToLower(h)] || p.authorities["["+strings.ToLower(h)+"]"]
	}
	return false
}

// Authorities returns the authorities the directory is signed for,
// sorted.
func (p *Published) Authorities() []string {
	out := make([]string, 0, len(p.authorities))
	for a := range p.authorities {
		out = append(out, a)
	}
	slices.Sort(out)
	return out
}
