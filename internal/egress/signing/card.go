package signing

import (
	"net/url"

	"github.com/robotsproxy/robotsproxy/internal/rules"
)

// Card is what an identity's Signature Agent Card
// (draft-meunier-webbotauth-registry-04) says about the crawler besides
// its keys and product token: rules.Card, the configuration's
// signing.identities[].card.
type Card = rules.Card

// JWKSURL returns the Signature-Agent member value for a configured
// signature_agent URL (one rules.CheckAgentURL accepts): the URL itself when it
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
