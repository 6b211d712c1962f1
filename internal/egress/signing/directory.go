package signing

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The key directory (draft-meunier-webbotauth-httpsig-directory, formerly
// draft-meunier-http-message-signatures-directory): a JWKS of the public
// keys verifiers fetch at the well-known path of the Signature-Agent
// origin, each key signing the response.
const (
	// DirectoryPath is the directory's well-known path (its section
	// "Well-Known 'http-message-signatures-directory' URI").
	DirectoryPath = "/.well-known/http-message-signatures-directory"
	// DirectoryContentType is the media type the directory MUST be
	// served with (its section "Configuration").
	DirectoryContentType = "application/http-message-signatures-directory+json"
	// DirectoryTag is the tag parameter of the directory's signatures
	// (its section "Binding keys to the directory authority").
	DirectoryTag = "http-message-signatures-directory"
	// DefaultDirectoryValidity is how long a directory response's
	// signatures are valid (expires - created) when
	// DirectoryOptions.Validity is 0.
	DefaultDirectoryValidity = time.Hour
)

// Entry is one signing identity as the directory and its Signature Agent
// Card publish it.
type Entry struct {
	// Slug names the identity's card:
	// /.well-known/signature-agent-cards/SLUG.json. Lower-case letters,
	// digits, '-', '_' and '.'; required.
	Slug string
	// ProductToken is the RFC 9309 product token the identity crawls as
	// ("" for none, "*" is left out of the card).
	ProductToken string
	// SignatureAgent is the https URL of the identity's Signature-Agent
	// header: where verifiers fetch the directory.
	SignatureAgent string
	// Card is what the operator says about the identity.
	Card Card
	// Keys are the identity's keys, the active one and those rotated out
	// or in; those without a private key are listed but cannot sign the
	// directory response.
	Keys []*Key
}

// Published is one key directory, built by Publish at a start or reload:
// the JWKS body and its Content-Digest, the keys that sign each response,
// and the cards. It does not change once built.
type Published struct {
	body    []byte
	digest  string         // Content-Digest field value (RFC 9530)
	signers []*Key         // the keys with a private key, once each
	keys    []*Key         // every key, once each, in the order listed
	cards   []renderedCard // in the order of the agents
	// authorities are those the responses may be signed for (see
	// Serves), normalized for https.
	authorities map[string]bool
}

// Publish builds the directory of agents: every key of every agent,
// once each (by ID), in the order given. Its responses are signed only
// for the authorities the agents' SignatureAgent URLs name and for extra
// (HOST or HOST:PORT each, the port left out when 443; see Serves).
// Errors: a key without an ID or a public key, an agent with a bad Slug,
// two agents with one Slug, a SignatureAgent or an extra authority that
// names no authority.
func Publish(agents []Entry, extra ...string) (*Published, error) {
	p := &Published{}
	var err error
	if p.authorities, err = directoryAuthorities(agents, extra); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	jwks := []map[string]any{}
	for _, a := range agents {
		for _, k := range a.Keys {
			if k == nil || k.ID == "" || len(k.Public) == 0 {
				return nil, fmt.Errorf("key directory: identity %q has a key without an ID or a public key", a.Slug)
			}
			if seen[k.ID] {
				continue
			}
			seen[k.ID] = true
			p.keys = append(p.keys, k)
			if k.CanSign() {
				p.signers = append(p.signers, k)
			}
			jwks = append(jwks, directoryJWK(k))
		}
	}
	body, err := json.Marshal(map[string]any{"keys": jwks})
	if err != nil {
		return nil, fmt.Errorf("key directory: %w", err)
	}
	p.body, p.digest = body, contentDigest(body)
	if p.cards, err = buildCards(agents); err != nil {
		return nil, err
	}
	return p, nil
}

// directoryJWK is a key's JWK as the directory lists it: Key.JWK with
// "use":"sig", as the draft's examples show.
func directoryJWK(k *Key) map[string]any {
	m := k.JWK()
	m["use"] = "sig"
	return m
}

// Body returns the directory's JWKS, {"keys":[...]}: what is served and
// archived. The caller must not change it.
func (p *Published) Body() []byte { return p.body }

// Keys returns every key of the directory, once each. The caller must not
// change them.
func (p *Published) Keys() []*Key { return p.keys }

// Headers returns the header fields of a directory response served for
// authority (the request's Host, see NormalizeAuthority; one Serves
// accepts, or the error is ErrAuthority) at now: the
// Content-Type, Cache-Control, Content-Digest and, for each key that can
// sign, one signature (labels sig1, sig2, ... in key order) in
// Signature-Input and Signature, covering "@authority";req and
// "content-digest", with created, expires (now + validity), keyid (the
// key's thumbprint) and tag DirectoryTag.
func (p *Published) Headers(authority string, now time.Time, validity time.Duration) (http.Header, error) {
	if !p.Serves(authority) {
		return nil, fmt.Errorf("key directory for %q: %w", authority, ErrAuthority)
	}
	return signedHeaders(p.digest, DirectoryContentType, p.signers, authority, now, validity)
}

// signedHeaders returns the headers of a signed response carrying body.
func signedHeaders(digest, contentType string, signers []*Key, authority string, now time.Time, validity time.Duration) (http.Header, error) {
	if validity <= 0 {
		validity = DefaultDirectoryValidity
	}
	h := http.Header{}
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", "max-age="+strconv.Itoa(int(cacheFor(validity).Seconds())))
	h.Set("Content-Digest", digest)
	if len(signers) == 0 {
		return h, nil
	}
	var inputs, sigs []string
	for i, k := range signers {
		in, sig := signResponse(fmt.Sprintf("sig%d", i+1), k, authority, digest, now, validity)
		inputs, sigs = append(inputs, in), append(sigs, sig)
	}
	h.Set("Signature-Input", strings.Join(inputs, ", "))
	h.Set("Signature", strings.Join(sigs, ", "))
	return h, nil
}

// cacheFor is how long a response may be cached: a fifth of the
// signatures' validity, at most 5 minutes, so that a cached copy is still
// valid and a reload's keys show soon.
func cacheFor(validity time.Duration) time.Duration {
	return min(validity/5, 5*time.Minute).Truncate(time.Second)
}

// signResponse makes one directory signature, the Signature-Input and
// Signature members under label: covered components "@authority";req
// (RFC 9421 sections 2.2.3 and 2.4: the authority of the request it
// answers) and content-digest; parameters created (now), expires (now +
// validity), tag DirectoryTag and keyid.
func signResponse(label string, k *Key, authority, digest string, now time.Time, validity time.Duration) (input, sig string) {
	var b signatureBase
	b.grow(len(authority) + len(digest))
	b.add(`"@authority";req`, authority)
	b.add(`"content-digest"`, digest)
	in, base := b.finish(sigParams{created: now.Unix(), expires: now.Add(validity).Unix(), tag: DirectoryTag, keyID: k.ID})
	return label + "=" + in, label + "=" + signBase(k.Private, base)
}

// NormalizeAuthority returns the @authority of a request for host (the
// Host header, or the authority of a URL) as RFC 9421 section 2.2.3
// wants it: the host in lower case, without the default port of scheme
// ("http": 80, "https": 443). An empty host is an error.
func NormalizeAuthority(host, scheme string) (string, error) {
	if host == "" {
		return "", errors.New("no authority (Host)")
	}
	host = strings.ToLower(host)
	h, port, err := net.SplitHostPort(host)
	if err != nil {
		return host, nil // no port
	}
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		if strings.Contains(h, ":") {
			return "[" + h + "]", nil
		}
		return h, nil
	}
	return host, nil
}
