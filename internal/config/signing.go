package config

import (
	"errors"
	"fmt"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Signing configures Web Bot Auth signatures (internal/egress/signing): every
// forwarded request, plain or inside an intercepted tunnel, is signed
// with the active key of its identity. Off by default.
type Signing struct {
	// Enabled turns signing on. Default false.
	Enabled bool `yaml:"enabled"`
	// Label names our signature in Signature-Input, Signature and
	// Signature-Agent; when a client's own signature uses it, Label1,
	// Label2, ... is used. An RFC 9651 key. Default "robotsproxy".
	Label string `yaml:"label"`
	// Expires is how long a signature is valid after its created time.
	// Default 60s; at most 24h.
	Expires time.Duration `yaml:"expires"`
	// MaxBodyBytes bounds a request body buffered to compute its
	// Content-Digest; a larger one is not sent (502). Default 4194304
	// (4 MiB).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// DirectoryListen is the HOST:PORT of the key directory
	// (/.well-known/http-message-signatures-directory); "" serves none.
	// Default "".
	DirectoryListen string `yaml:"directory_listen"`
	// DirectoryAuthorities are authorities (HOST or HOST:PORT, the port
	// left out when 443) the key directory and the Signature Agent Cards
	// are also signed for, besides the hosts of the identities'
	// signature_agent URLs: a request for any other Host gets 421,
	// unsigned. Default none.
	DirectoryAuthorities []string `yaml:"directory_authorities"`
	// Identities map identities to keys. Default none.
	Identities []SigningIdentity `yaml:"identities"`
}

// SigningIdentity is one identity's keys. It names exactly one of
// ProductToken, User, ClientRange and Default.
type SigningIdentity struct {
	// ProductToken selects requests decided for this product token.
	ProductToken string `yaml:"product_token"`
	// User selects the requests of this identity.users name.
	User string `yaml:"user"`
	// ClientRange selects requests pinned by this identity.client_ranges
	// CIDR.
	ClientRange string `yaml:"client_range"`
	// Default selects every request no other entry selects.
	Default bool `yaml:"default"`
	// Keys are key directories ("robotsproxy keys init DIR"); all are
	// published in the key directory.
	Keys []string `yaml:"keys"`
	// Active is the one of Keys that signs. Default the first.
	Active string `yaml:"active"`
	// SignatureAgent is the https URL of the key directory (a JWK Set),
	// sent as the Signature-Agent member; an origin alone
	// (https://crawler.example.com) stands for its well-known directory
	// URL (signing.JWKSURL in internal/egress/signing). Required.
	SignatureAgent string `yaml:"signature_agent"`
	// Card fills the identity's Signature Agent Card.
	Card rules.Card `yaml:"card"`
}

func defaultSigning() Signing {
	return Signing{Label: rules.DefaultSignatureLabel, Expires: rules.DefaultSignatureExpires, MaxBodyBytes: rules.DefaultSignatureMaxBodyBytes,
		DirectoryAuthorities: []string{}, Identities: []SigningIdentity{}}
}

// ActiveKey returns the identity's active key directory: Active, or the
// first of Keys.
func (s *SigningIdentity) ActiveKey() string {
	if s.Active != "" || len(s.Keys) == 0 {
		return s.Active
	}
	return s.Keys[0]
}

// validateSigning checks the signing.* keys. Errors name the key. The key
// files themselves are read by the server (at start and reload).
func (c *Config) validateSigning() error {
	s := c.Signing
	if err := rules.CheckSignatureBounds(s.Label, s.Expires, s.MaxBodyBytes); err != nil {
		return fmt.Errorf("signing: %w", err)
	}
	switch {
	case s.Label == "":
		return errors.New("signing.label: must not be empty (default \"robotsproxy\")")
	case s.Expires <= 0:
		return fmt.Errorf("signing.expires: %w", positive(s.Expires))
	case s.MaxBodyBytes < 1:
		return fmt.Errorf("signing.max_body_bytes: must be at least 1, got %d", s.MaxBodyBytes)
	}
	if err := hostPort(s.DirectoryListen, true); err != nil {
		return fmt.Errorf("signing.directory_listen: %w", err)
	}
	for i, a := range s.DirectoryAuthorities {
		if err := rules.CheckAuthority(a); err != nil {
			return fmt.Errorf("signing.directory_authorities[%d]: %w", i, err)
		}
	}
	if s.Enabled && len(s.Identities) == 0 {
		return errors.New("signing.identities: signing is enabled but no identity has keys")
	}
	seen := map[string]int{}
	for i := range s.Identities {
		key := fmt.Sprintf("signing.identities[%d]", i)
		if err := c.checkSelector(s.Identities[i].Selector()); err != nil {
			return fmt.Errorf("%s.%w", key, err)
		}
		sel := s.Identities[i].Selector().Name()
		if j, dup := seen[sel]; dup {
			return fmt.Errorf("%s: selects the same requests as signing.identities[%d] (%s)", key, j, sel)
		}
		seen[sel] = i
		if err := validateSigningKeys(&s.Identities[i]); err != nil {
			return fmt.Errorf("%s.%w", key, err)
		}
	}
	return nil
}

// validateSigningKeys checks an identity's keys, active key, Signature
// Agent URL and card.
func validateSigningKeys(id *SigningIdentity) error {
	if len(id.Keys) == 0 {
		return errors.New("keys: list at least one key directory (robotsproxy keys init DIR)")
	}
	dirs := map[string]bool{}
	for j, k := range id.Keys {
		if k == "" || dirs[k] {
			return fmt.Errorf("keys[%d]: empty or repeated key directory %q", j, k)
		}
		dirs[k] = true
	}
	if !dirs[id.ActiveKey()] {
		return fmt.Errorf("active: %q is not one of keys", id.Active)
	}
	if err := rules.CheckAgentURL(id.SignatureAgent); err != nil {
		return fmt.Errorf("signature_agent: %w", err)
	}
	if err := id.Card.Validate(); err != nil {
		return fmt.Errorf("card.%w", err)
	}
	return nil
}
