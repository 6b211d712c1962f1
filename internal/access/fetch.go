package access

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/pquerna/cachecontrol/cacheobject"

	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// MaxRedirects is how many consecutive redirects a robots.txt fetch follows
// (RFC 9309 2.3.1.2: at least five); one more makes the file unavailable.
const MaxRedirects = 5

var errTooManyRedirects = errors.New("more than 5 consecutive redirects")

// MaxResponseHeaderBytes bounds the header of a robots.txt response, in
// octets (the Fetcher's http.Transport MaxResponseHeaderBytes; Go's
// default is 10 MiB). A response whose header is larger is a fetch error:
// the file is Unreachable, a complete disallow (RFC 9309 2.3.1.4).
const MaxResponseHeaderBytes = 64 << 10

// MaxKeptHeaderValue bounds each value kept in Access.Header, in octets.
const MaxKeptHeaderValue = 1 << 10

// archivedHeaders are the response fields kept in Access.Header.
var archivedHeaders = []string{"Content-Type", "Cache-Control", "Last-Modified", "Etag"}

// headerSubset returns the first value of each field of h named in
// archivedHeaders, cut to MaxKeptHeaderValue octets, nil when none is
// present. Every reader of Access.Header uses Get, the first value.
func headerSubset(h http.Header) http.Header {
	var out http.Header
	for _, k := range archivedHeaders {
		if v := h[k]; len(v) > 0 {
			if out == nil {
				out = make(http.Header, len(archivedHeaders))
			}
			out[k] = []string{cut(v[0], MaxKeptHeaderValue)}
		}
	}
	return out
}

// cut returns s cut to at most n octets, backed off to the start of a
// UTF-8 sequence so that a multi-octet character is not split.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// FetcherOptions configure a Fetcher. Zero durations mean the defaults.
type FetcherOptions struct {
	// Guard checks every dialled address, redirects included. Required.
	Guard *netguard.Guard
	// UserAgent is sent with robots.txt requests.
	UserAgent string
	// ConnectTimeout bounds TCP connect; default 5s.
	ConnectTimeout time.Duration
	// Timeout bounds the whole fetch, body included; default 15s.
	Timeout time.Duration
	// Parse sets the parse limit; the body read is capped at it too.
	Parse robots.Options
	// TooManyRequestsUnreachable treats 429 as unreachable (like large
	// crawlers do) instead of unavailable.
	TooManyRequestsUnreachable bool
	// TLS configures upstream TLS; nil verifies against the system roots.
	TLS *tls.Config
}

// Fetcher fetches and compiles robots.txt files. It never uses a proxy from
// the environment: it must not loop into the proxy it serves.
type Fetcher struct {
	client *http.Client
	opts   FetcherOptions
}

// NewFetcher returns a Fetcher with its own HTTP client.
func NewFetcher(o FetcherOptions) *Fetcher {
	if o.ConnectTimeout == 0 {
		o.ConnectTimeout = 5 * time.Second
	}
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Second
	}
	tr := &http.Transport{
		Proxy:                 nil, // never HTTP_PROXY: that would be ourselves
		DialContext:           o.Guard.DialContext(o.ConnectTimeout),
		TLSHandshakeTimeout:   o.ConnectTimeout,
		ResponseHeaderTimeout: o.Timeout,
		// robots.txt is fetched about once a day per authority: an idle
		// connection per authority would only pile up sockets (10,000 new
		// authorities held 11,035 fds), so none is kept.
		DisableKeepAlives:      true,
		TLSClientConfig:        o.TLS,
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
	}
	client := &http.Client{
		Transport: tr,
		Timeout:   o.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > MaxRedirects {
				return errTooManyRedirects
			}
			return nil
		},
	}
	return &Fetcher{client: client, opts: o}
}

// Fetch gets the robots.txt of a canonical scheme and authority (see
// policy.Authority) and classifies the outcome per
// RFC 9309 2.3.1. It never returns an error: failures are Unreachable (or
// Unavailable for redirect loops) with Err set.
func (f *Fetcher) Fetch(ctx context.Context, scheme, authority string) policy.Access {
	start := time.Now()
	a := f.fetch(ctx, policy.RobotsURL(scheme, authority))
	a.FetchedAt, a.Duration = start, time.Since(start)
	return a
}

func (f *Fetcher) fetch(ctx context.Context, url string) policy.Access {
	return f.get(ctx, url, "robots.txt", "", f.classify)
}

// get fetches url (a what: "robots.txt", "license", for errors) with the
// Fetcher's client, guard and limits, sending accept as Accept when not
// "", and hands a response to classify; a request that gets no response
// is classified here.
func (f *Fetcher) get(ctx context.Context, url, what, accept string, classify func(policy.Access, *http.Response) policy.Access) policy.Access {
	a := policy.Access{URL: url, FinalURL: url, MaxAge: -1}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		a = fail(a, policy.Unreachable, fmt.Errorf("fetch %s %s: %w", what, url, err))
		a.Cause = policy.CauseOther
		return a
	}
	if f.opts.UserAgent != "" {
		req.Header.Set("User-Agent", f.opts.UserAgent)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		if errors.Is(err, errTooManyRedirects) {
			return fail(a, policy.Unavailable, fmt.Errorf("fetch %s %s: %w", what, url, err))
		}
		a.Refused = netguard.IsRefused(err)
		a = fail(a, policy.Unreachable, fmt.Errorf("fetch %s %s: %w", what, url, err))
		a.Cause = classifyError(err, url)
		return a
	}
	defer resp.Body.Close()
	a.Status = resp.StatusCode
	a.FinalURL = resp.Request.URL.String()
	a.MaxAge = maxAge(resp.Header)
	a.Header = headerSubset(resp.Header)
	return classify(a, resp)
}

// classify maps the response status to an access result (RFC 9309 2.3.1) and
// parses the body of 2xx responses only.
func (f *Fetcher) classify(a policy.Access, resp *http.Response) policy.Access {
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		// Read one octet past the parse limit so the parser can tell
		// whether the limit cut the last line.
		body, err := io.ReadAll(io.LimitReader(resp.Body, int64(f.opts.Parse.Limit()+1)))
		if err != nil {
			a = fail(a, policy.Unreachable, fmt.Errorf("read robots.txt %s: %w", a.FinalURL, err))
			a.Cause = classifyError(err, a.FinalURL)
			return a
		}
		// Parsed with the kept header, as audit verify and a fleet
		// replica re-parse a.Raw, so all three compile the same rules.
		a.Result, a.Robots = policy.Successful, ParseBody(body, a.Header, f.opts.Parse)
		a.Raw, a.SHA256 = body, sha256.Sum256(body)
	default:
		a = f.classifyStatus(a, s)
	}
	return a
}

// classifyStatus classifies a status that is not 2xx (RFC 9309 2.3.1).
func (f *Fetcher) classifyStatus(a policy.Access, s int) policy.Access {
	switch {
	case s == http.StatusTooManyRequests && f.opts.TooManyRequestsUnreachable:
		a.Result, a.Cause = policy.Unreachable, policy.CauseStatus
	case s >= 400 && s < 500:
		a.Result = policy.Unavailable
	default: // 5xx, and 1xx/3xx that could not be followed: fail closed.
		a.Result, a.Cause = policy.Unreachable, policy.CauseStatus
	}
	return a
}

// fail returns a with result r and error err.
func fail(a policy.Access, r policy.AccessResult, err error) policy.Access {
	a.Result, a.Err = r, err
	return a
}

// DeclaredCharset returns the charset parameter of a response's
// Content-Type, "" when there is none or it does not parse;
// robots.Options.Charset uses it to bridge bodies that are not UTF-8
// (RFC 9309 2.2.2). audit verify re-parses archived bodies with it.
func DeclaredCharset(h http.Header) string {
	_, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return params["charset"]
}

// maxAge returns the Cache-Control max-age of a response, or -1.
func maxAge(h http.Header) time.Duration {
	cc, err := cacheobject.ParseResponseCacheControl(h.Get("Cache-Control"))
	if err != nil || cc.MaxAge < 0 {
		return -1
	}
	return time.Duration(cc.MaxAge) * time.Second
}
