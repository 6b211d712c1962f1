package license

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/robotsproxy/robotsproxy/robots"
)

// DefaultMaxBytes is the largest license document read when no limit is
// given: robots.txt's parse limit (robots.DefaultMaxBytes).
const DefaultMaxBytes = robots.DefaultMaxBytes

// License is a parsed RSL document. It is immutable and safe for
// concurrent use.
type License struct {
	// Contents are the content elements that have a url, in document
	// order.
	Contents []Content
	// retained is what the license keeps live (see Retained).
	retained int
}

// Content is one content element: what its licenses say for the paths
// its url matches.
type Content struct {
	// URL is the url attribute as written.
	URL string
	// Server is the server attribute (a License Server URL), "" when
	// absent.
	Server string
	// host is the lower-cased host of an absolute URL, "" for a path.
	host    string
	pattern robots.Pattern
	terms   []terms
}

// terms are one license element's usage terms.
type terms struct {
	permits    purposeSet
	hasPermits bool
	prohibits  purposeSet
}

// The XML shapes read (local names: any namespace).
type xmlRSL struct {
	XMLName xml.Name     `xml:"rsl"`
	Content []xmlContent `xml:"content"`
}

type xmlContent struct {
	URL     string       `xml:"url,attr"`
	Server  string       `xml:"server,attr"`
	License []xmlLicense `xml:"license"`
}

type xmlLicense struct {
	Permits   []xmlList `xml:"permits"`
	Prohibits []xmlList `xml:"prohibits"`
}

type xmlList struct {
	Type string `xml:"type,attr"`
	Text string `xml:",chardata"`
}

// errEmpty is the error for an empty document.
var errEmpty = errors.New("empty document")

// Parse reads an RSL document. The caller bounds its size (see Source).
// It returns an error for a document that is not well-formed XML, or
// whose root element is not rsl; it never panics.
func Parse(body []byte) (*License, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errEmpty
	}
	var doc xmlRSL
	d := xml.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&doc); err != nil {
		return nil, fmt.Errorf("rsl: %w", err)
	}
	l := &License{}
	if len(doc.Content) > 0 {
		l.Contents = make([]Content, 0, len(doc.Content))
	}
	for _, c := range doc.Content {
		if content, ok := newContent(c); ok {
			l.Contents = append(l.Contents, content)
		}
	}
	l.retained = retainedSize(l)
	return l, nil
}

// newContent compiles a content element; ok is false when it has no
// usable url.
func newContent(c xmlContent) (Content, bool) {
	raw := trimmed(c.URL)
	out := Content{URL: raw, Server: trimmed(c.Server)}
	path := raw
	if !strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "*") {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
			return out, false
		}
		out.host, path = ownedBy(strings.ToLower(u.Hostname()), raw), robots.PathOf(raw)
	}
	if path == "" {
		return out, false
	}
	out.pattern = robots.ParsePattern(path)
	if len(c.License) > 0 {
		out.terms = make([]terms, 0, len(c.License))
	}
	for _, lic := range c.License {
		out.terms = append(out.terms, newTerms(lic))
	}
	return out, true
}

// newTerms reads a license element's usage lists.
func newTerms(l xmlLicense) terms {
	var t terms
	for _, p := range l.Permits {
		if isUsageType(p.Type) {
			t.permits |= parseUsages(p.Text)
			t.hasPermits = true
		}
	}
	for _, p := range l.Prohibits {
		if isUsageType(p.Type) {
			t.prohibits |= parseUsages(p.Text)
		}
	}
	return t
}

// isUsageType reports whether a permits or prohibits type attribute is
// "usage" (case-insensitive).
func isUsageType(t string) bool { return strings.EqualFold(strings.TrimSpace(t), "usage") }

// Retained returns the octets the parsed license keeps live, measured
// from its structure when parsed (see retainedSize): see
// policy.Document.
func (l *License) Retained() int { return l.retained }
