package signing

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"
)

// Signature Agent Cards (draft-meunier-webbotauth-registry-04, section
// "Signature Agent Card"): one JSON object per identity saying who signs,
// for what, and how it treats robots.txt: OAuth client metadata (RFC
// 7591) with a web_bot_auth object.
const (
	// CardPath serves the card of the first identity (the default one
	// when there is one): the draft's discovery example names
	// /.well-known/signature-agent-card.
	CardPath = "/.well-known/signature-agent-card"
	// CardsPrefix serves each identity's card at CardsPrefix+SLUG+".json".
	CardsPrefix = "/.well-known/signature-agent-cards/"
	// CardContentType is the cards' media type: the draft's (a client
	// metadata document is application/json).
	CardContentType = "application/json"
)

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

// CardJSON returns the Signature Agent Card of a, as a JSON object
// (draft-meunier-webbotauth-registry-04 section 3):
//
//	client_id     the card's own URL, https://AUTHORITY/.well-known/signature-agent-cards/SLUG.json,
//	              AUTHORITY that of a.SignatureAgent (left out without one)
//	client_name   Card.Name
//	client_uri    Card.Description when it is an https URL
//	contacts      [Card.Contact], an e-mail address as a mailto URI
//	jwks_uri      a.SignatureAgent: the JWK Set verifiers fetch (section 3.1.2)
//	web_bot_auth  rfc9309-product-token (left out for "*" and ""),
//	              rfc9309-compliance true (robotsproxy enforces RFC 9309 for
//	              every request it signs), purpose (Card.Purpose)
//	description   Card.Description when it is not a URL: a member the draft
//	              does not define (verifiers ignore unknown members)
//
// Empty values are left out.
func CardJSON(a Entry) map[string]any {
	m := map[string]any{}
	if auth, err := AgentAuthority(a.SignatureAgent); err == nil && a.SignatureAgent != "" {
		m["client_id"] = "https://" + auth + CardsPrefix + a.Slug + ".json"
		m["jwks_uri"] = a.SignatureAgent
	}
	if a.Card.Name != "" {
		m["client_name"] = a.Card.Name
	}
	if u, err := url.Parse(a.Card.Description); err == nil && u.Scheme == "https" && u.Host != "" {
		m["client_uri"] = a.Card.Description
	} else if a.Card.Description != "" {
		m["description"] = a.Card.Description
	}
	if c := a.Card.ContactURI(); c != "" {
		m["contacts"] = []string{c}
	}
	wba := map[string]any{"rfc9309-compliance": true}
	if a.ProductToken != "" && a.ProductToken != "*" {
		wba["rfc9309-product-token"] = a.ProductToken
	}
	if a.Card.Purpose != "" {
		wba["purpose"] = a.Card.Purpose
	}
	m["web_bot_auth"] = wba
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
// signing a card, covering Content-Digest). ok is false
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
