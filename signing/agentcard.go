package signing

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// Signature Agent Cards (draft-meunier-webbotauth-registry-04, section
// "Signature Agent Card"): one JSON object per identity saying who signs,
// for what, and how it treats robots.txt.
const (
	// CardPath serves the card of the first identity (the default one
	// when there is one): the draft's discovery example names
	// /.well-known/signature-agent-card.
	CardPath = "/.well-known/signature-agent-card"
	// CardsPrefix serves each identity's card at CardsPrefix+SLUG+".json".
	CardsPrefix = "/.well-known/signature-agent-cards/"
	// CardContentType is the cards' media type: the draft registers none.
	CardContentType = "application/json"
)

// RFC9309Compliance is the card's rfc9309-compliance: the robots.txt
// fields robotsproxy enforces for every identity it signs for (RFC 9309
// user-agent, allow and disallow; crawl-delay through politeness;
// Content-Usage through usage preferences).
var RFC9309Compliance = []string{"User-Agent", "Allow", "Disallow", "Crawl-delay", "Content-Usage"}

// renderedCard is one identity's card, rendered.
type renderedCard struct {
	slug    string
	body    []byte
	digest  string
	signers []*Key
}

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// buildCards renders the card of each agent.
func buildCards(agents []Entry) ([]renderedCard, error) {
	var cards []renderedCard
	seen := map[string]bool{}
	for _, a := range agents {
		if !slugRE.MatchString(a.Slug) {
			return nil, fmt.Errorf("signature agent card: slug %q: want 1 to 64 lower-case letters, digits, '.', '_' or '-'", a.Slug)
		}
		if seen[a.Slug] {
			return nil, fmt.Errorf("signature agent card: two identities named %q", a.Slug)
		}
		seen[a.Slug] = true
		body, err := json.Marshal(CardJSON(a))
		if err != nil {
			return nil, fmt.Errorf("signature agent card %s: %w", a.Slug, err)
		}
		c := renderedCard{slug: a.Slug, body: body, digest: contentDigest(body)}
		for _, k := range a.Keys {
			if k.CanSign() {
				c.signers = append(c.signers, k)
			}
		}
		cards = append(cards, c)
	}
	return cards, nil
}

// CardJSON returns the Signature Agent Card of a, as a JSON object: name,
// contact, about (Card.Description), purpose, rfc9309-product-token
// (left out for "*" and ""), rfc9309-compliance (RFC9309Compliance),
// signature-agent (a member the draft does not define: verifiers ignore
// it, people read it) and keys, the JWKS of a's keys. Empty strings are
// left out.
func CardJSON(a Entry) map[string]any {
	m := map[string]any{"rfc9309-compliance": RFC9309Compliance}
	for k, v := range map[string]string{"name": a.Card.Name, "contact": a.Card.Contact, "about": a.Card.Description,
		"purpose": a.Card.Purpose, "signature-agent": a.SignatureAgent} {
		if v != "" {
			m[k] = v
		}
	}
	if a.ProductToken != "" && a.ProductToken != "*" {
		m["rfc9309-product-token"] = a.ProductToken
	}
	keys := []map[string]any{}
	for _, k := range a.Keys {
		keys = append(keys, directoryJWK(k))
	}
	m["keys"] = map[string]any{"keys": keys}
	return m
}

// Cards returns each identity's card as (slug, JSON body), in the order of
// the agents.
func (p *Published) Cards() (slugs []string, bodies [][]byte) {
	for _, c := range p.cards {
		slugs, bodies = append(slugs, c.slug), append(bodies, c.body)
	}
	return slugs, bodies
}

// card returns the card of slug; "" is the first card.
func (p *Published) card(slug string) (renderedCard, bool) {
	for _, c := range p.cards {
		if slug == "" || c.slug == slug {
			return c, true
		}
	}
	return renderedCard{}, false
}

// CardHeaders returns the header fields of the card of slug ("" for the
// first) served for authority (one Serves accepts, or the error is
// ErrAuthority) at now: Content-Type CardContentType,
// Cache-Control, Content-Digest, and one signature per key of the
// identity that can sign, as Headers makes them (the draft recommends
// signing a card that lists keys, covering Content-Digest). ok is false
// when there is no such card.
func (p *Published) CardHeaders(slug, authority string, now time.Time, validity time.Duration) (body []byte, h http.Header, ok bool, err error) {
	c, ok := p.card(slug)
	if !ok {
		return nil, nil, false, nil
	}
	if !p.Serves(authority) {
		return nil, nil, true, fmt.Errorf("signature agent card for %q: %w", authority, ErrAuthority)
	}
	h, err = signedHeaders(c.digest, CardContentType, c.signers, authority, now, validity)
	return c.body, h, true, err
}
