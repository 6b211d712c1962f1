// Package check implements "robotsproxy check": it decides URLs against a
// local robots.txt file for one crawler, as the proxy would on a successful
// access (policy.DecideAccess: the path as sent and every reading an origin
// may take of it), or under the plain RFC 9309 reading of the path as sent
// (Options.RFC), and explains each decision, with the other records of the
// crawler's groups and the usage preferences that apply to each URL.
package check

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Options configure a check run.
type Options struct {
	// JSON writes one JSON object per URL instead of text lines.
	JSON bool
	// Stdin is read, one URL per line, for the URL "-".
	Stdin io.Reader
	// Stdout receives one line per URL.
	Stdout io.Writer
	// Warn, when not nil, receives a warning line when the robots.txt
	// file is not text (robots.NotText): a gzip-compressed copy, UTF-16,
	// binary data. Its decisions are still written, from what could be
	// read of it.
	Warn io.Writer
	// RFC decides each URL's path as sent only, the plain RFC 9309 2.2.2
	// reading (-rfc), instead of as the proxy does: as sent and as origins
	// may resolve it (dot segments, "%2F", "%2e", ";parameters", "//").
	// The output says which reading decided.
	RFC bool
	// Usage is a purpose, a usage category label such as "train-ai",
	// "search" or "ai-input" (-usage): the preference that applies to each
	// URL for it is written, from Content-Usage rules and from the
	// Content-Signal of that name. "" writes none in text output.
	Usage string
	// License is a local copy of the RSL license robots.txt names
	// (-license FILE): each URL's Result.License says what it decides.
	// "" decides nothing; the License line is still shown.
	License string
}

// Result is the JSON form of one URL's decision.
type Result struct {
	URL           string   `json:"url"`
	Allowed       bool     `json:"allowed"`
	ProductTokens []string `json:"product_tokens"`
	Group         string   `json:"group,omitempty"`
	Groups        []Group  `json:"groups"`
	Rule          *Rule    `json:"rule,omitempty"`
	StarFallback  bool     `json:"star_fallback"`
	Implicit      bool     `json:"implicit_robots_txt,omitempty"`
	// PathResolved is the reading of the path that decided when it is not
	// the path as sent (see policy.MatchPath), normalised as rules are
	// matched; omitted when the path as sent decided.
	PathResolved string `json:"path_resolved,omitempty"`
	// Reading is ReadingRFC under -rfc (Options.RFC); omitted otherwise,
	// when the path is read as the proxy reads it (ReadingProxy).
	Reading string `json:"reading,omitempty"`
	// The other records of the crawler's groups and file (the same for
	// every URL), null or empty when the file has none.
	CrawlDelay    *CrawlDelay       `json:"crawl_delay"`
	RequestRate   *RequestRate      `json:"request_rate"`
	Sitemaps      []string          `json:"sitemaps"`
	ContentSignal map[string]Signal `json:"content_signal"`
	// ContentUsage is what the Content-Usage rules say of this URL.
	ContentUsage ContentUsage `json:"content_usage"`
	// Usage answers -usage PURPOSE; omitted without it.
	Usage *UsageResult `json:"usage,omitempty"`
	// License is the RSL license that applies (robots.txt's License
	// line, decided from -license FILE); omitted when there is none.
	License *LicenseResult `json:"license,omitempty"`
}

// The readings of a path check decides by (Result.Reading).
const (
	// ReadingProxy: the path as sent and every reading an origin may take
	// of it, as the proxy decides; denied when any reading is disallowed.
	ReadingProxy = "proxy"
	// ReadingRFC: the path as sent only (RFC 9309 2.2.2), the -rfc
	// reading; the proxy may deny what it allows.
	ReadingRFC = "rfc9309"
)

// Group is a matched group: where it starts and whom it names.
type Group struct {
	Line   int      `json:"line"`
	Agents []string `json:"agents"`
}

// Rule is the deciding rule.
type Rule struct {
	Text  string `json:"text"`
	Line  int    `json:"line"`
	Allow bool   `json:"allow"`
}

// Run decides each URL for the crawler named by userAgent (a bare product
// token or a whole User-Agent header) against the robots.txt file at path.
// It reports whether every URL was allowed. Errors are I/O errors, a
// *LineError for a line of stdin that ValidURL refuses, and an
// Options.Usage that is not a usage category label (robots.IsUsageLabel).
func Run(path, userAgent string, urls []string, o Options) (bool, error) {
	if o.Usage != "" && !robots.IsUsageLabel(o.Usage) {
		return false, fmt.Errorf("-usage %q: not a usage label (a lower-case letter or \"*\", then lower-case letters, digits, \"_\", \"-\", \".\", \"*\")", o.Usage)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read robots.txt: %w", err)
	}
	if why := robots.NotText(body); why != "" && o.Warn != nil {
		fmt.Fprintf(o.Warn, "robotsproxy: warning: %s is not text (%s); robots.txt is UTF-8 text (RFC 9309 2.3), so what follows is decided from whatever could be read of it\n", path, why)
	}
	c := checker{
		robots: robots.Parse(body),
		id:     identity.NewIdentifier(identity.DefaultBrowserTokens(), nil).Identify(userAgent),
		out:    bufio.NewWriter(o.Stdout),
		json:   o.JSON,
		usage:  o.Usage,
		rfc:    o.RFC,
		all:    true,
	}
	if c.license, err = readLicense(c.robots, o.License); err != nil {
		return false, err
	}
	c.extras = newFileExtras(c.robots, c.id.Candidates)
	for _, u := range urls {
		if u == "-" {
			if err := c.stream(o.Stdin); err != nil {
				if ferr := c.out.Flush(); ferr != nil {
					return false, errors.Join(err, fmt.Errorf("write: %w", ferr))
				}
				return false, err
			}
			continue
		}
		c.decide(u)
	}
	if err := c.out.Flush(); err != nil {
		return false, fmt.Errorf("write: %w", err)
	}
	return c.all, c.err
}

// LineError is a line of stdin that is not a URL check can decide: Run
// returns it after writing the decisions of the lines before it.
type LineError struct {
	// Line is the line's number, from 1.
	Line int
	// Text is the line without its surrounding white space.
	Text string
	// Err says what is wrong with it (see ValidURL).
	Err error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("stdin line %d: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// ValidURL reports whether s is a URL check decides: an absolute http or
// https URL with a host, a path starting with "/" (not "//"), or "-" (read
// URLs from stdin). The error says what s is not.
func ValidURL(s string) error {
	if s == "-" || plainURL(s) {
		return nil
	}
	return parsedURL(s)
}

// parsedURL is ValidURL's rule, by url.Parse.
func parsedURL(s string) error {
	u, err := url.Parse(s)
	if err != nil {
		return fmt.Errorf("URL %q: %v", s, err)
	}
	switch {
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
		return nil // a path
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("URL %q: want an absolute http or https URL (https://example.org/path) or a path (/path)", s)
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("URL %q: no host", s)
	}
	return nil
}

// plainURL reports, without allocating, whether s is of a plain form that
// parsedURL accepts: a path starting with "/" (not "//"), or "http://" or
// "https://", a host name of letters, digits, ".", "-", "_" and "~", an
// optional ":" and port digits, and nothing or a path, query or fragment;
// in either form without control octets, and with every "%" starting
// an escape of two hexadecimal digits. Other URLs may be valid too:
// ValidURL asks parsedURL about them.
func plainURL(s string) bool {
	rest := s
	switch {
	case strings.HasPrefix(s, "/"):
		if strings.HasPrefix(s, "//") {
			return false
		}
	case strings.HasPrefix(s, "https://"):
		rest = s[len("https://"):]
	case strings.HasPrefix(s, "http://"):
		rest = s[len("http://"):]
	default:
		return false
	}
	if len(rest) < len(s) { // the authority
		i := 0
		for i < len(rest) && hostOctet(rest[i]) {
			i++
		}
		if i == 0 {
			return false
		}
		if i < len(rest) && rest[i] == ':' {
			for i++; i < len(rest) && '0' <= rest[i] && rest[i] <= '9'; i++ {
			}
		}
		if i < len(rest) && rest[i] != '/' && rest[i] != '?' && rest[i] != '#' {
			return false
		}
		rest = rest[i:]
	}
	for i := 0; i < len(rest); i++ {
		switch c := rest[i]; {
		case c < ' ' || c == 0x7f:
			return false
		case c == '%':
			if i+2 >= len(rest) || !isHex(rest[i+1]) || !isHex(rest[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// hostOctet reports whether c may be an octet of plainURL's host names.
func hostOctet(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_' || c == '~'
}

// isHex reports whether c is a hexadecimal digit.
func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

type checker struct {
	robots *robots.Robots
	id     identity.Identity
	rfc    bool
	out    *bufio.Writer
	json   bool
	usage  string
	line   []byte // writeText's buffer, reused
	extras fileExtras
	// license is the license robots.txt names, nil for none.
	license *licenseInput
	all     bool
	err     error
}

// asciiSpace is the white space trimmed from a URL line read from stdin:
// ASCII only, since Unicode spaces such as U+00A0 may be part of a URL.
const asciiSpace = " \t\r\n\v\f"

// stream decides URLs read from r, one per line, in constant memory. The
// line terminator (LF or CRLF) and the ASCII white space around the URL are
// removed; nothing else is. Empty lines are skipped. A line that ValidURL
// refuses (or "-") ends the run with a *LineError: the URLs before it are
// decided and written.
func (c *checker) stream(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		u := strings.Trim(sc.Text(), asciiSpace)
		if u == "" {
			continue
		}
		err := ValidURL(u)
		if err == nil && u == "-" {
			err = errors.New(`URL "-": stdin is being read (a URL, or a path starting with "/", is wanted)`)
		}
		if err != nil {
			return &LineError{Line: n, Text: u, Err: err}
		}
		c.decide(u)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read URLs from stdin: %w", err)
	}
	return nil
}

// verdict is one URL's decision as check writes it.
type verdict struct {
	up robots.UsagePrefs // the crawl verdict, and the preferences that apply
	// resolved is the reading of the path that decided, "" when the path
	// as sent decided.
	resolved string
}

// decide writes the decision for one URL.
func (c *checker) decide(u string) {
	v := c.verdict(u)
	if !v.up.Verdict.Allowed {
		c.all = false
	}
	var err error
	if c.json {
		err = c.writeJSON(u, v)
	} else {
		err = c.writeText(u, v)
	}
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("write: %w", err)
	}
}

// verdict decides one URL: the path a client sends for it (without its
// fragment, which HTTP clients do not send) as the proxy decides it on a
// successful access (policy.DecideAccess matches the path's readings with
// policy.MatchPath), or under -rfc as sent only. The usage preferences
// are read for the path the proxy reads them for: the deciding reading
// when it is not the path as sent.
//
// One match of the path decides an ordinary URL: the path as sent is
// matched again only when another reading exists and denied, to say
// which reading decided, and the usage preferences only when the file
// has Content-Usage rules (else they are the verdict alone).
func (c *checker) verdict(u string) verdict {
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	path := policy.RequestPath(u)
	cands := c.id.Candidates
	if c.rfc {
		return verdict{up: c.robots.Usage(path, cands...)}
	}
	d, resolved := policy.MatchPath(c.robots, path, cands...)
	var v verdict
	switch {
	case d.Implicit:
		// The path as sent names /robots.txt, always allowed (RFC 9309
		// 2.2.2); such a path has no other reading (auditlog.ReasonImplicit).
		v.up = c.prefs(path)
		v.up.Verdict = robots.Verdict{Allowed: true, Implicit: true}
	case !d.Allowed:
		v.up.Verdict = d // no preference applies to a disallowed URL
		if resolved != "" && c.robots.Test(path, cands...).Allowed {
			v.resolved = resolved // another reading decided
		}
	default:
		p := path
		if resolved != "" {
			p = resolved
		}
		v.up = c.prefs(p)
		v.up.Verdict = d
	}
	return v
}

// prefs returns the usage preferences of an allowed path (their verdict
// is the caller's to set): robots.Robots.Usage, whose path match is
// skipped when the file has no Content-Usage rule (it would find none).
func (c *checker) prefs(path string) robots.UsagePrefs {
	if !c.robots.HasContentUsage() {
		return robots.UsagePrefs{}
	}
	return c.robots.Usage(path, c.id.Candidates...)
}

func (c *checker) writeText(u string, v verdict) error {
	b := c.line[:0]
	if v.up.Verdict.Allowed {
		b = append(b, "ALLOWED "...)
	} else {
		b = append(b, "DISALLOWED "...)
	}
	b = append(append(b, u...), '\t')
	b = appendDetail(b, v.up.Verdict)
	if v.resolved != "" {
		b = append(append(b, "\tpath_resolved "...), v.resolved...)
	}
	if c.usage != "" {
		b = append(append(b, '\t'), c.extras.usageText(v.up, c.usage)...)
	}
	if c.rfc {
		b = append(b, "\treading rfc9309: the path as sent only; the proxy also decides the readings origins may take of it"...)
	}
	b = append(b, '\n')
	c.line = b
	_, err := c.out.Write(b)
	return err
}

// appendDetail appends a few words that explain a verdict to b.
func appendDetail(b []byte, v robots.Verdict) []byte {
	switch {
	case v.Implicit:
		return append(b, "/robots.txt is always allowed"...)
	case v.Agent == "":
		return append(b, "no group applies"...)
	case v.Fallback:
		b = append(b, "group * (fallback)"...)
	default:
		b = append(append(b, "group "...), v.Agent...)
	}
	if !v.Matched() {
		return append(b, ": no matching rule"...)
	}
	b = strconv.AppendInt(append(b, ": line "...), int64(v.Rule.Line), 10)
	return v.Rule.AppendText(append(b, ": "...))
}

func (c *checker) writeJSON(u string, vd verdict) error {
	up := vd.up
	v := up.Verdict
	res := Result{
		PathResolved:  vd.resolved,
		URL:           u,
		Allowed:       v.Allowed,
		ProductTokens: c.id.Candidates,
		Group:         v.Agent,
		Groups:        []Group{},
		StarFallback:  v.Fallback,
		Implicit:      v.Implicit,
		CrawlDelay:    c.extras.crawlDelay,
		RequestRate:   c.extras.requestRate,
		Sitemaps:      c.extras.sitemaps,
		ContentSignal: c.extras.signals,
		ContentUsage:  contentUsage(up, c.usage),
	}
	if c.usage != "" {
		r := c.extras.usageResult(up, c.usage)
		res.Usage = &r
	}
	if c.license != nil {
		res.License = c.license.result(u, licensePath(u, vd.resolved), c.usage)
	}
	if c.rfc {
		res.Reading = ReadingRFC
	}
	if res.ProductTokens == nil {
		res.ProductTokens = []string{}
	}
	for _, gi := range v.Groups() {
		g := c.robots.Group(gi)
		res.Groups = append(res.Groups, Group{Line: g.Line, Agents: g.Agents})
	}
	if v.Matched() {
		res.Rule = &Rule{Text: v.Rule.Text(), Line: v.Rule.Line, Allow: v.Rule.Allow}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = c.out.Write(b)
	return err
}
