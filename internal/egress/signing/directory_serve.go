package signing

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// DirectoryOptions configure a DirectoryServer.
type DirectoryOptions struct {
	// Now is the clock of the signatures' created and expires; nil is
	// time.Now.
	Now func() time.Time
	// Validity is how long each response's signatures are valid; 0 is
	// DefaultDirectoryValidity.
	Validity time.Duration
	// Log receives a line per response that could not be signed.
	Log zerolog.Logger
}

// DirectoryServer serves the live key directory and the Signature Agent
// Cards (the signing.directory_listen listener):
//
//	GET DirectoryPath               the JWKS, DirectoryContentType, signed by each key
//	GET CardPath                    the first identity's card
//	GET CardsPrefix+SLUG+".json"    the card of identity SLUG
//
// HEAD is answered as GET without the body; another method gets 405,
// another path 404. A request whose Host is not an authority of the
// directory (Published.Serves: the signature_agent hosts and the extra
// authorities) gets 421 Misdirected Request (RFC 9110 section 15.5.20),
// unsigned: the directory vouches only for its own authorities.
// Every answer is its status code, never a redirect
// (draft-ietf-webbotauth-httpsig-protocol-01 section 5.5: verifiers
// treat any status but 200 as a discovery failure and follow no
// redirect). Set swaps the directory in (a start or reload): a
// request sees the old one or the new one, never a mix. It is safe for
// concurrent use.
type DirectoryServer struct {
	opts DirectoryOptions
	cur  atomic.Pointer[Published]
}

// NewDirectoryServer returns a server of p (nil: an empty directory until
// Set).
func NewDirectoryServer(p *Published, o DirectoryOptions) *DirectoryServer {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Validity <= 0 {
		o.Validity = DefaultDirectoryValidity
	}
	d := &DirectoryServer{opts: o}
	if p == nil {
		p, _ = Publish(nil)
	}
	d.cur.Store(p)
	return d
}

// Set makes p the directory served from now on.
func (d *DirectoryServer) Set(p *Published) { d.cur.Store(p) }

// Current returns the directory served now.
func (d *DirectoryServer) Current() *Published { return d.cur.Load() }

// ServeHTTP serves the directory and the cards (see DirectoryServer).
func (d *DirectoryServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	slug, isCard := cardSlug(r.URL.Path)
	if r.URL.Path != DirectoryPath && !isCard {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	authority, err := NormalizeAuthority(r.Host, scheme)
	if err != nil {
		http.Error(w, "no Host", http.StatusBadRequest)
		return
	}
	p := d.cur.Load()
	if !p.Serves(authority) {
		http.Error(w, "this host serves no key directory", http.StatusMisdirectedRequest)
		return
	}
	var body []byte
	var h http.Header
	if isCard {
		var ok bool
		body, h, ok, err = p.CardHeaders(slug, authority, d.opts.Now(), d.opts.Validity)
		if !ok {
			http.NotFound(w, r)
			return
		}
	} else {
		body = p.Body()
		h, err = p.Headers(authority, d.opts.Now(), d.opts.Validity)
	}
	if err != nil { // fail closed: no unsigned directory
		d.opts.Log.Error().Err(err).Str("path", r.URL.Path).Msg("key directory: the response could not be signed")
		http.Error(w, "the directory could not be signed", http.StatusInternalServerError)
		return
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// cardSlug returns the slug a card path names ("" for CardPath); ok is
// false for any other path.
func cardSlug(path string) (slug string, ok bool) {
	if path == CardPath {
		return "", true
	}
	rest, ok := strings.CutPrefix(path, CardsPrefix)
	if !ok {
		return "", false
	}
	slug, ok = strings.CutSuffix(rest, ".json")
	return slug, ok && slugRE.MatchString(slug)
}
