package signing

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"

	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Tag is the signature's tag parameter for Web Bot Auth
// (draft-ietf-webbotauth-httpsig-protocol-01).
const Tag = "web-bot-auth"

// Defaults and bounds of Settings (rules.DefaultSignatureLabel,
// rules.DefaultSignatureExpires, rules.MaxSignatureExpires,
// rules.DefaultSignatureMaxBodyBytes).
const (
	// DefaultLabel is the signature label when none is set.
	DefaultLabel = rules.DefaultSignatureLabel
	// DefaultExpires is how long a signature is valid after its created
	// time when Settings.Expires is zero.
	DefaultExpires = rules.DefaultSignatureExpires
	// MaxExpires bounds Settings.Expires.
	MaxExpires = rules.MaxSignatureExpires
	// DefaultMaxBodyBytes bounds a request body buffered for its
	// Content-Digest when Settings.MaxBodyBytes is zero.
	DefaultMaxBodyBytes = rules.DefaultSignatureMaxBodyBytes
)

// The fields a signature involves.
const (
	headerSignature      = "Signature"
	headerSignatureInput = "Signature-Input"
	headerAgent          = "Signature-Agent"
	headerContentDigest  = "Content-Digest"
)

// PriceHeaders are the pay-per-crawl request fields a signature covers
// when the request carries them (the crawler's price acceptance must be
// signed).
var PriceHeaders = []string{"crawler-exact-price", "crawler-max-price"}

// ErrBodyTooLarge is wrapped by the error Sign returns when a request body
// is over Settings.MaxBodyBytes: its Content-Digest cannot be computed
// without buffering it, so the request is not sent.
var ErrBodyTooLarge = errors.New("request body too large to sign")

// Agent is what one identity signs with: its keys, one of them active,
// and the URL of its key directory, sent as its Signature-Agent member.
type Agent struct {
	// Keys are all the identity's keys, published in the directory
	// (including retired, public-only ones).
	Keys []*Key
	// Active is the key that signs; it is one of Keys and holds its
	// private key.
	Active *Key
	// URL is the https URL of the identity's key directory, a JWK Set
	// URI, the value of its Signature-Agent member (an RFC 9651
	// sf-string, with no parameters:
	// draft-ietf-webbotauth-httpsig-protocol-01 section 5.2.1). See
	// JWKSURL.
	URL string
	// ProductToken is the product token the identity's Signature Agent
	// Card names, "" when the identity has none (a default).
	ProductToken string
	// Card is the rest of the identity's Signature Agent Card.
	Card Card
}

// Settings is the signing configuration in force: swapped whole by
// Transport.Store on reload.
type Settings struct {
	// Label names our signature; when a client's own signature already
	// uses it, the first free one of Label1, Label2, ... is used.
	// "" means DefaultLabel. It must be an RFC 9651 key (lower-case).
	Label string
	// Expires is how long after created the signature expires; zero
	// means DefaultExpires, at most MaxExpires.
	Expires time.Duration
	// MaxBodyBytes bounds a request body buffered to compute its
	// Content-Digest (RFC 9530); zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Agents maps identities to what they sign with. An identity it does
	// not map is forwarded unsigned.
	Agents egress.Table[*Agent]
	// All lists every Agent of Agents once, in configuration order (for
	// the key directory).
	All []*Agent
}

// Validate checks the settings' bounds, and that every agent of All has
// an active key that can sign at now (its private key, and now within its
// validity) and an https Signature-Agent URL.
func (s *Settings) Validate(now time.Time) error {
	for i, a := range s.All {
		if a.Active == nil || !a.Active.CanSign() {
			return fmt.Errorf("agent %d: no active key with its private key", i)
		}
		if err := a.Active.validityError(now); err != nil {
			return fmt.Errorf("agent %d: %w", i, err)
		}
		if err := rules.CheckAgentURL(a.URL); err != nil {
			return fmt.Errorf("agent %d: Signature-Agent: %w", i, err)
		}
	}
	return rules.CheckSignatureBounds(s.Label, s.Expires, s.MaxBodyBytes)
}

// Signed is what Sign did.
type Signed struct {
	// KeyID is the signing key's keyid (its JWK thumbprint).
	KeyID string
	// Label is the label the signature was added under.
	Label string
	// Created and Expires are the signature's created and expires
	// parameters (whole seconds).
	Created, Expires time.Time
}

// Sign is SignAt at the system clock's time.
func Sign(req *http.Request, agent *Agent, s *Settings, rnd io.Reader) (Signed, error) {
	return SignAt(req, agent, s, time.Now(), rnd)
}

// SignAt signs req in place with agent's active key at time now, as Web
// Bot Auth asks (draft-ietf-webbotauth-httpsig-protocol-01; RFC 9421
// sections 2 and 3.1): it sets the Signature-Agent member,
// Content-Digest (RFC 9530, sha-256) when req has a body (read whole, at
// most s.MaxBodyBytes, and replaced by a buffer), and adds Signature-Input
// and Signature members under a label no signature of the client's uses.
// The covered components are @authority, "signature-agent";key=LABEL,
// @method, @path, @query when the URL has a query, content-digest when
// there is a body, and the PriceHeaders present, in that order. req.Host
// is normalised to the @authority signed (RFC 9421 2.2.3: lower case, no
// default port). rnd supplies the nonce (nil: crypto/rand). Errors wrap
// ErrBodyTooLarge, or say which field of the client's stops us from
// adding ours; req must not be sent then.
func SignAt(req *http.Request, agent *Agent, s *Settings, now time.Time, rnd io.Reader) (Signed, error) {
	k := agent.Active
	if k == nil || !k.CanSign() {
		return Signed{}, errors.New("signing: the identity has no active private key")
	}
	if err := k.validityError(now); err != nil {
		return Signed{}, withCause(CauseKeyNotValid, err) // fails closed: sites would refuse the signature
	}
	label, err := freeLabel(req.Header, s.label())
	if err != nil {
		return Signed{}, withCause(CauseClientField, err)
	}
	if err := addAgent(req.Header, label, agent.URL); err != nil {
		return Signed{}, withCause(CauseClientField, err)
	}
	normalizeTarget(req)
	digested, err := digestBody(req, s.maxBody())
	if err != nil {
		return Signed{}, err
	}
	nonce, err := newNonce(rnd)
	if err != nil {
		return Signed{}, err
	}
	var b signatureBase
	b.grow(len(req.Host) + len(agent.URL) + len(req.URL.Path) + len(req.URL.RawQuery))
	b.add(`"@authority"`, req.Host)
	b.add(`"signature-agent";key=`+sfString(label), sfString(agent.URL))
	b.add(`"@method"`, req.Method)
	b.add(`"@path"`, req.URL.EscapedPath())
	if req.URL.RawQuery != "" {
		b.add(`"@query"`, "?"+req.URL.RawQuery)
	}
	if digested {
		b.addField(req.Header, "content-digest")
	}
	for _, h := range PriceHeaders {
		if len(req.Header.Values(h)) > 0 {
			b.addField(req.Header, h)
		}
	}
	created, expires := now.Unix(), now.Add(s.expires()).Unix()
	input, base := b.finish(sigParams{created: created, expires: expires, nonce: nonce, tag: Tag, keyID: k.ID})
	addMember(req.Header, headerSignatureInput, label+"="+input)
	addMember(req.Header, headerSignature, label+"="+signBase(k.Private, base))
	return Signed{KeyID: k.ID, Label: label, Created: time.Unix(created, 0), Expires: time.Unix(expires, 0)}, nil
}

func (s *Settings) label() string {
	if s.Label == "" {
		return DefaultLabel
	}
	return s.Label
}

func (s *Settings) expires() time.Duration {
	if s.Expires == 0 {
		return DefaultExpires
	}
	return s.Expires
}

func (s *Settings) maxBody() int64 {
	if s.MaxBodyBytes == 0 {
		return DefaultMaxBodyBytes
	}
	return s.MaxBodyBytes
}

// newNonce returns 32 random octets in base64 (RFC 4648 section 4).
func newNonce(rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [32]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("signing: nonce: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b[:]), nil
}

// addMember appends a dictionary member to the field h, keeping the
// members already there (a client's own signature) unchanged; empty field
// lines are dropped.
func addMember(h http.Header, name, member string) {
	var lines []string
	for _, v := range h.Values(name) {
		if v = strings.TrimSpace(v); v != "" {
			lines = append(lines, v)
		}
	}
	h[name] = []string{strings.Join(append(lines, member), ", ")}
}

// normalizeTarget sets req.Host to the @authority that is signed and sent
// (NormalizeAuthority) and an empty path to "/" (RFC 9421 2.2.6).
func normalizeTarget(req *http.Request) {
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	if a, err := NormalizeAuthority(host, req.URL.Scheme); err == nil {
		host = a
	}
	req.Host = host
	if req.URL.Path == "" && req.URL.Opaque == "" {
		req.URL.Path = "/"
	}
}

// digestBody reads req's body, at most max octets, puts it back as a
// buffer and sets Content-Digest to its SHA-256 (RFC 9530 section 2).
// It reports whether there was a body. A client's own Content-Digest is
// kept, when it has a sha-256 member that matches; one that does not is
// an error.
func digestBody(req *http.Request, max int64) (bool, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return false, nil
	}
	if req.ContentLength > max {
		req.Body.Close()
		return false, fmt.Errorf("signing: %w: Content-Length %d is over %d octets (signing.max_body_bytes)", ErrBodyTooLarge, req.ContentLength, max)
	}
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(req.Body, max+1))
	req.Body.Close()
	if err != nil {
		return false, fmt.Errorf("signing: read the request body: %w", err)
	}
	if n > max {
		return false, fmt.Errorf("signing: %w: over %d octets (signing.max_body_bytes)", ErrBodyTooLarge, max)
	}
	body := buf.Bytes()
	req.ContentLength = n
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	req.Body, _ = req.GetBody()
	if n == 0 {
		req.Body, req.GetBody = http.NoBody, nil
		return false, nil
	}
	sum := sha256.Sum256(body)
	if old := req.Header.Values(headerContentDigest); len(old) > 0 {
		return true, withCause(CauseClientField, checkDigest(old, sum[:]))
	}
	req.Header.Set(headerContentDigest, digestOf(sum[:]))
	return true, nil
}

// checkDigest checks a client's Content-Digest against the body's SHA-256.
func checkDigest(field []string, sum []byte) error {
	d, err := httpsfv.UnmarshalDictionary(field)
	if err != nil {
		return fmt.Errorf("signing: the request's Content-Digest is not a dictionary (RFC 9530): %w", err)
	}
	m, ok := d.Get("sha-256")
	if !ok {
		return errors.New("signing: the request's Content-Digest has no sha-256 member to sign")
	}
	if it, ok := m.(httpsfv.Item); ok {
		if b, ok := it.Value.([]byte); ok && bytes.Equal(b, sum) {
			return nil
		}
	}
	return errors.New("signing: the request's Content-Digest sha-256 does not match its body")
}
