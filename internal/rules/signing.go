package rules

import (
	"errors"
	"fmt"
	"net/mail"
	"net/url"
	"strings"
	"time"
)

// Defaults and bounds of signatures (signing.* keys, signing.Settings).
const (
	// DefaultSignatureLabel is the signature label (the member name in
	// Signature-Input, Signature and Signature-Agent) when none is set.
	DefaultSignatureLabel = "robotsproxy"
	// DefaultSignatureExpires is how long a signature is valid after its created
	// time when signing.expires is zero.
	DefaultSignatureExpires = 60 * time.Second
	// MaxSignatureExpires bounds signing.expires: the protocol draft asks for
	// short-lived signatures, at most a day.
	MaxSignatureExpires = 24 * time.Hour
	// DefaultSignatureMaxBodyBytes bounds a request body buffered for its
	// Content-Digest when signing.max_body_bytes is zero: 4 MiB.
	DefaultSignatureMaxBodyBytes = 4 << 20
)

// CheckSignatureBounds checks a signature's label, validity and body
// bound ("" and zeros mean the defaults): the label an RFC 9651 key
// (section 3.2), expires at most MaxSignatureExpires and not negative,
// maxBodyBytes not negative.
func CheckSignatureBounds(label string, expires time.Duration, maxBodyBytes int64) error {
	if label != "" && !IsStructuredKey(label) {
		return fmt.Errorf("signature label %q is not a structured field key (RFC 9651 3.2: lower-case letters, digits, _ - . *)", label)
	}
	if expires < 0 || expires > MaxSignatureExpires {
		return fmt.Errorf("signature expires %v: want at most %v", expires, MaxSignatureExpires)
	}
	if maxBodyBytes < 0 {
		return fmt.Errorf("max body bytes %d: want 0 (the default) or more", maxBodyBytes)
	}
	return nil
}

// CheckAuthority checks an authority given in the configuration or on
// the command line: HOST or HOST:PORT (an IPv6 host in brackets), with
// no scheme, user information, path, query or fragment.
func CheckAuthority(s string) error {
	if s == "" {
		return errors.New("empty authority: want HOST or HOST:PORT")
	}
	u, err := url.Parse("https://" + s)
	if err != nil || u.Host != s || u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Hostname() == "" {
		return fmt.Errorf("want HOST or HOST:PORT such as crawler.example.com, got %q", s)
	}
	if p := u.Port(); p == "" && strings.HasSuffix(s, ":") {
		return fmt.Errorf("want HOST or HOST:PORT, got %q (empty port)", s)
	}
	return nil
}

// CheckAgentURL checks a Signature-Agent URL: an absolute https URL with a
// host and no user information or fragment
// (draft-ietf-webbotauth-httpsig-protocol-01).
func CheckAgentURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("want an https URL: %w", err)
	case u.Scheme != "https" || u.Host == "":
		return fmt.Errorf("want an https URL such as https://crawler.example.com, got %q", s)
	case u.User != nil || u.Fragment != "" || strings.ContainsAny(s, "\"\\ ") || CheckPrintable(s) != nil:
		return fmt.Errorf("want an https URL of printable ASCII without user information, fragment, quotes or spaces, got %q", s)
	}
	return nil
}

// IsStructuredKey reports whether s is an RFC 9651 key (section 3.2): a lower-case
// letter or "*", then lower-case letters, digits, "_", "-", "." or "*".
func IsStructuredKey(s string) bool {
	if s == "" || !(s[0] == '*' || 'a' <= s[0] && s[0] <= 'z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.' || c == '*') {
			return false
		}
	}
	return true
}

// CheckPrintable returns an error when s holds a character an RFC 9651
// String cannot (outside %x20-7E).
func CheckPrintable(s string) error {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return fmt.Errorf("%q holds a character outside printable ASCII", s)
		}
	}
	return nil
}

// Card is what an identity's Signature Agent Card
// (draft-meunier-webbotauth-registry-04) says about the crawler besides
// its keys and product token: the configuration's signing.identities[].card.
// Every field is optional.
type Card struct {
	// Name is the crawler's human-readable name.
	Name string `yaml:"name"`
	// Purpose says what the crawler's output is used for.
	Purpose string `yaml:"purpose"`
	// Contact is how a site reaches the operator: an https or mailto URL,
	// or an e-mail address.
	Contact string `yaml:"contact"`
	// Description is free text about the crawler.
	Description string `yaml:"description"`
}

// maxCardField bounds each field of a Card, in octets.
const maxCardField = 1024

// Validate checks the card's fields: at most 1024 octets each, no control
// characters, and a Contact that is an https or mailto URL or an e-mail
// address. Errors name the field.
func (c Card) Validate() error {
	for _, f := range []struct{ name, v string }{{"name", c.Name}, {"purpose", c.Purpose}, {"contact", c.Contact}, {"description", c.Description}} {
		if len(f.v) > maxCardField {
			return fmt.Errorf("%s: over %d octets", f.name, maxCardField)
		}
		if strings.ContainsFunc(f.v, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			return fmt.Errorf("%s: holds a control character", f.name)
		}
	}
	if c.Contact == "" {
		return nil
	}
	if u, err := url.Parse(c.Contact); err == nil && (u.Scheme == "https" && u.Host != "" || u.Scheme == "mailto" && u.Opaque != "") {
		return nil
	}
	if _, err := mail.ParseAddress(c.Contact); err == nil && !strings.Contains(c.Contact, ":") {
		return nil
	}
	return fmt.Errorf("contact: want an https or mailto URL or an e-mail address, got %q", c.Contact)
}

// ContactURI returns Contact as a URI for a card's contacts
// (draft-meunier-webbotauth-registry-04: an array of URIs): an e-mail
// address ("bots@example.com", "Bots <bots@example.com>") as a mailto
// URI of the address, a URL as it is, "" for none.
func (c Card) ContactURI() string {
	if c.Contact == "" || strings.Contains(c.Contact, ":") {
		return c.Contact
	}
	if a, err := mail.ParseAddress(c.Contact); err == nil {
		return "mailto:" + a.Address
	}
	return c.Contact
}
