package signing

import (
	"fmt"
	"net/mail"
	"net/url"
	"strings"
)

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

// JWKSURL returns the Signature-Agent member value for a configured
// signature_agent URL (one CheckAgentURL accepts): the URL itself when it
// has a path or a query, or, when it names an origin only
// (https://crawler.example or https://crawler.example/), the URL of the
// key directory at that origin's well-known path (DirectoryPath).
// draft-ietf-webbotauth-httpsig-protocol-01 section 5.5 makes the member
// a JWK Set URI that verifiers fetch as it is, with no path appended:
// an origin alone would name its home page.
func JWKSURL(agent string) string {
	u, err := url.Parse(agent)
	if err != nil || u.Host == "" || u.RawQuery != "" || u.ForceQuery || (u.Path != "" && u.Path != "/") {
		return agent
	}
	return u.Scheme + "://" + u.Host + DirectoryPath
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
	case u.User != nil || u.Fragment != "" || strings.ContainsAny(s, "\"\\ ") || checkPrintable(s) != nil:
		return fmt.Errorf("want an https URL of printable ASCII without user information, fragment, quotes or spaces, got %q", s)
	}
	return nil
}
