package robots_test

// A naive reference implementation of RFC 9309, written from the RFC text
// for differential testing: slow and obviously right. It shares no code with
// the package. Each rule is translated to an anchored regular expression and
// every rule is evaluated; the longest pattern wins and allow wins ties
// (2.2.2). Its leniencies are the ones the package documents.

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
)

// refBridge reads a line that is not UTF-8 as windows-1252 (the package's
// bridging of non-UTF-8 files, RFC 9309 2.2.2 last paragraph). A rule on
// such a line is also read from its raw octets (see refParse).
func refBridge(line string) string {
	if utf8.ValidString(line) {
		return line
	}
	out, _ := charmap.Windows1252.NewDecoder().String(line)
	return out
}

type refRule struct {
	allow   bool
	pattern string // normalised
	line    int
	re      *regexp.Regexp
}

type refGroup struct {
	agents []string // lower-cased product tokens and names (refAgents)
	rules  []refRule
}

var (
	refLineSplit = regexp.MustCompile(`\r\n|\r|\n`)
	refColon     = regexp.MustCompile(`^([^:]*):(.*)$`)
	refNoColon   = regexp.MustCompile(`^([^ \t]+)[ \t]+(.*)$`)
	refToken     = regexp.MustCompile(`^[A-Za-z_-]+`)
	// refName is a value's leading RFC 9110 token; refProduct,
	// refAlnumToken and refLetter read it for the name rule (refIsName).
	refName       = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+")
	refProduct    = regexp.MustCompile(`^[A-Za-z_-]+$`)
	refAlnumToken = regexp.MustCompile("^[0-9A-Za-z][!#$%&'*+.^_`|~0-9A-Za-z-]*$")
	refLetter     = regexp.MustCompile(`[A-Za-z]`)
	refEscape     = regexp.MustCompile(`^%[0-9A-Fa-f]{2}$`)
)

var refKeys = map[string]string{
	"user-agent": "ua", "useragent": "ua", "user agent": "ua", "user-agents": "ua",
	"allow": "allow", "disallow": "disallow", "dissallow": "disallow", "dissalow": "disallow",
	"disalow": "disallow", "diasllow": "disallow", "disallaw": "disallow",
}

// refParse parses a body into groups (RFC 9309 2.1, 2.2).
func refParse(body []byte) []refGroup {
	s := string(body)
	for _, bom := range []string{"\xEF\xBB\xBF", "\xEF\xBB", "\xEF"} {
		if strings.HasPrefix(s, bom) {
			s = s[len(bom):]
			break
		}
	}
	var groups []refGroup
	lastWasAgent := false
	for i, raw := range refLineSplit.Split(s, -1) {
		line := refContent(refBridge(raw))
		if line == "" {
			continue
		}
		kind, value := refKey(line)
		switch kind {
		case "ua":
			if !lastWasAgent {
				groups = append(groups, refGroup{})
			}
			lastWasAgent = true
			g := &groups[len(groups)-1]
			g.agents = append(g.agents, refAgents(value)...)
		case "allow", "disallow":
			if len(groups) == 0 {
				continue // rules outside groups are ignored (2.2.2)
			}
			lastWasAgent = false
			g := &groups[len(groups)-1]
			p := refNormalize(value, true)
			if value != "" { // an empty value matches nothing
				g.rules = append(g.rules, refRule{allow: kind == "allow", pattern: p, line: i + 1, re: refRegexp(p)})
			}
			// A bridged line's raw octets, when they read as another
			// pattern of the same kind: one more rule on the same line.
			if rk, rv := refKey(refContent(raw)); raw != refBridge(raw) && rk == kind && rv != "" {
				if rp := refNormalize(rv, true); rp != p {
					g.rules = append(g.rules, refRule{allow: kind == "allow", pattern: rp, line: i + 1, re: refRegexp(rp)})
				}
			}
		}
	}
	return groups
}

// refContent is a line without its comment and surrounding white space.
func refContent(line string) string {
	line, _, _ = strings.Cut(line, "#")
	return strings.Trim(line, " \t")
}

// refKey classifies a line: "key: value", or a known key, white space and
// a value.
func refKey(line string) (string, string) {
	if m := refColon.FindStringSubmatch(line); m != nil {
		if k, ok := refKeys[strings.ToLower(strings.Trim(m[1], " \t"))]; ok {
			return k, strings.Trim(m[2], " \t")
		}
	}
	if m := refNoColon.FindStringSubmatch(line); m != nil {
		if k, ok := refKeys[strings.ToLower(m[1])]; ok {
			return k, strings.Trim(m[2], " \t")
		}
	}
	return "", ""
}

// refAgents are what a user-agent value names, lower-cased: its product
// token and, by the package's name rule (a deliberate choice beyond RFC
// 9309, see robots.IsAgentName), its whole name when that is a name:
// "MJ12bot" gives "mj" and "mj12bot".
func refAgents(value string) []string {
	if value == "*" || strings.HasPrefix(value, "* ") || strings.HasPrefix(value, "*\t") {
		return []string{"*"}
	}
	out := []string{refASCIILower(refToken.FindString(value))}
	if n := refName.FindString(value); refIsName(n) {
		out = append(out, refASCIILower(n))
	}
	return out
}

// refIsName reports whether s is a name of the name rule: a product
// token, or a token that starts with a letter or digit and holds a letter.
func refIsName(s string) bool {
	return refProduct.MatchString(s) || refAlnumToken.MatchString(s) && refLetter.MatchString(s)
}

// refASCIILower lower-cases ASCII letters only: product tokens are ASCII.
func refASCIILower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// refNormalize applies 2.2.2's percent-encoding to a pattern or a path.
func refNormalize(s string, pattern bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if i+3 <= len(s) && refEscape.MatchString(s[i:i+3]) {
			var v byte
			fmt.Sscanf(s[i+1:i+3], "%X", &v)
			if isUnreservedRef(v) {
				b.WriteByte(v)
			} else {
				fmt.Fprintf(&b, "%%%02X", v)
			}
			i += 3
			continue
		}
		c := s[i]
		special := c == '*' && !pattern || c == '$' && (!pattern || i != len(s)-1)
		if c == '%' || c <= ' ' || c >= 0x7F || special {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
		i++
	}
	return b.String()
}

func isUnreservedRef(c byte) bool {
	return strings.IndexByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~", c) >= 0
}

// refRegexp translates a normalised pattern into an anchored regular
// expression: "*" is any run of octets, a final "$" the end (2.2.3).
func refRegexp(p string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)^`)
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '*':
			b.WriteString(`.*`)
		case p[i] == '$' && i == len(p)-1:
			b.WriteString(`$`)
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	return regexp.MustCompile(b.String())
}

// refTest decides path for one product token: (allowed, deciding line).
func refTest(groups []refGroup, path, token string) (bool, int) {
	path = refNormalize(path, false)
	if path == "" {
		path = "/"
	}
	if p, _, _ := strings.Cut(path, "?"); p == "/robots.txt" {
		return true, 0 // 2.2.2: implicitly allowed
	}
	rules := refRules(groups, refASCIILower(token))
	if rules == nil && token != "*" {
		rules = refRules(groups, "*")
	}
	var best *refRule
	for i := range rules {
		r := &rules[i]
		if !r.re.MatchString(path) {
			continue
		}
		if best == nil || len(r.pattern) > len(best.pattern) ||
			len(r.pattern) == len(best.pattern) && r.allow && !best.allow {
			best = r
		}
	}
	if best == nil {
		return true, 0
	}
	return best.allow, best.line
}

// refRules merges the rules of every group that names token (2.2.1); nil
// when no group does.
func refRules(groups []refGroup, token string) []refRule {
	var out []refRule
	found := false
	for _, g := range groups {
		for _, a := range g.agents {
			if a == token && a != "" {
				found = true
				out = append(out, g.rules...)
				break
			}
		}
	}
	if !found {
		return nil
	}
	if out == nil {
		out = []refRule{}
	}
	return out
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
func boolStr(b bool) string { return fmt.Sprint(b) }
func itoa(n int) string     { return fmt.Sprint(n) }
