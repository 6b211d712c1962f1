package policy

import (
	"context"
	"net/http"
	"net/url"
	"strings"
)

// LicenseMediaType is the RSL media type: a license fetch accepts it, and
// a Link header field that names a license has it as its type.
const LicenseMediaType = "application/rsl+xml"

// Observe records what the origin's response resp says about req, the
// client's request, decided as d and forwarded (allowed, or denied in
// report mode).
// Its fields come with the response, after the request was decided and
// sent: they never deny the request they answer.
//
//   - Politeness: the status and the Retry-After and Date fields go to
//     Options.Politeness for t, the request's Ticket (see Admit; nil
//     without politeness): a 429, or a 503 with Retry-After, pauses its
//     key; another answer below 500 ends a pause that is over.
//   - Licenses: when d records usage (purposes declared or preferences
//     stated), a Link field naming an RSL license (rel="license",
//     type=LicenseMediaType) is recorded in d.Usage.LicenseLink, and the
//     license is remembered for the resource req asked for (its path as
//     HTTPRequestPath reads it), so that later requests for it read it
//     (Options.Usage.Licenses); a successful response (2xx) naming none
//     forgets what was remembered.
//   - Usage preferences: the preferences of a Content-Usage field
//     (draft-ietf-aipref-attach-05 section 2) are added to d.Usage.Prefs,
//     for the audit line.
//
// ctx carries the request's values to the politeness state's update, which
// its cancellation does not cut short.
func (p *Policy) Observe(ctx context.Context, d *Decision, t Ticket, req *http.Request, resp *http.Response) {
	if t != nil && p.opts.Politeness != nil { // not cut short by the client's leaving: the origin did answer
		_ = p.opts.Politeness.Observe(context.WithoutCancel(ctx), t, resp.StatusCode,
			resp.Header.Get("Retry-After"), resp.Header.Get("Date")) // a local limiter does not fail
	}
	p.observeLicenseLink(d, req, resp)
	h := HeaderPreferences(resp.Header.Values("Content-Usage"))
	if len(h) == 0 {
		return
	}
	if d.Usage == nil {
		d.Usage = &Usage{}
	}
	d.Usage.Prefs = append(d.Usage.Prefs, h...)
}

// observeLicenseLink is Observe's license step.
func (p *Policy) observeLicenseLink(d *Decision, req *http.Request, resp *http.Response) {
	if d.Usage == nil {
		return
	}
	var u string
	if len(resp.Header["Link"]) > 0 {
		var base *url.URL
		if resp.Request != nil {
			base = resp.Request.URL
		}
		u = licenseLink(resp.Header.Values("Link"), base)
	}
	if u != "" {
		d.Usage.LicenseLink = u
	}
	success := resp.StatusCode >= 200 && resp.StatusCode <= 299
	src := p.opts.Usage.Licenses
	if src == nil || len(d.Usage.Purposes) == 0 || d.Robots == nil || u == "" && !success {
		return
	}
	src.RememberLink(d.licenseResource(d.DecidedPath(HTTPRequestPath(req))), u)
}

// licenseLink returns the license a response names in its Link header
// fields (RFC 8288): the target of the first link with rel "license"
// (among space-separated relation types, case-insensitive) and type
// LicenseMediaType,
// resolved against base (the request URL), as an absolute http or https
// URL; "" when there is none. values are the fields' values
// (http.Header.Values("Link")). Malformed links are skipped.
func licenseLink(values []string, base *url.URL) string {
	for _, v := range values {
		for _, link := range splitLinks(v) {
			target, params, ok := parseLink(link)
			if !ok || !hasRel(params["rel"], "license") || !strings.EqualFold(params["type"], LicenseMediaType) {
				continue
			}
			u, err := url.Parse(target)
			if err != nil {
				continue
			}
			if base != nil {
				u = base.ResolveReference(u)
			}
			if u.Host != "" && (u.Scheme == "http" || u.Scheme == "https") {
				return u.String()
			}
		}
	}
	return ""
}

// splitLinks splits a Link field value at the commas outside "<...>" and
// quoted strings.
func splitLinks(v string) []string {
	var out []string
	start, inURI, inQuote := 0, false, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case inQuote && c == '\\':
			i++
		case c == '"' && !inURI:
			inQuote = !inQuote
		case c == '<' && !inQuote:
			inURI = true
		case c == '>' && !inQuote:
			inURI = false
		case c == ',' && !inURI && !inQuote:
			out = append(out, v[start:i])
			start = i + 1
		}
	}
	return append(out, v[start:])
}

// parseLink reads one link-value: "<target>" then ";"-separated
// parameters, names lower-cased, values unquoted; the first of a repeated
// parameter wins (RFC 8288 3).
func parseLink(s string) (target string, params map[string]string, ok bool) {
	s = strings.TrimSpace(s)
	end := strings.IndexByte(s, '>')
	if !strings.HasPrefix(s, "<") || end < 0 {
		return "", nil, false
	}
	target, params = s[1:end], map[string]string{}
	for _, p := range strings.Split(s[end+1:], ";") {
		name, value, _ := strings.Cut(p, "=")
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = strings.ReplaceAll(value[1:len(value)-1], `\"`, `"`)
		}
		if _, seen := params[name]; name != "" && !seen {
			params[name] = value
		}
	}
	return target, params, true
}

// hasRel reports whether a rel parameter names relation type want.
func hasRel(rel, want string) bool {
	for _, r := range strings.Fields(rel) {
		if strings.EqualFold(r, want) {
			return true
		}
	}
	return false
}
