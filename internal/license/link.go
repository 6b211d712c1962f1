package license

import (
	"net/url"
	"strings"
)

// LinkURL returns the license a response names in its Link header fields
// (RFC 8288): the target of the first link with rel "license" (among
// space-separated relation types, case-insensitive) and type MediaType,
// resolved against base (the request URL), as an absolute http or https
// URL; "" when there is none. values are the fields' values
// (http.Header.Values("Link")). Malformed links are skipped.
func LinkURL(values []string, base *url.URL) string {
	for _, v := range values {
		for _, link := range splitLinks(v) {
			target, params, ok := parseLink(link)
			if !ok || !hasRel(params["rel"], "license") || !strings.EqualFold(params["type"], MediaType) {
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
