package catalogue

import (
	"strings"

	"github.com/robotsproxy/robotsproxy/robots"
)

// Shows reports whether the User-Agent header ua shows name as a word of
// its own, ASCII case-insensitively: not inside a longer word ("wget" is
// not in "WGETbot", "Googlebot" not in "Googlebot-Image"; a version may
// follow: "larbin_2.6.2"), not in a dotted name ("mail" is not in
// "go.mail.ru" nor "Mail.RU_Bot"),
// and not inside a URL or an e-mail address ("yandex" is not in
// "http://yandex.com/bots").
func Shows(ua, name string) bool {
	return ShowsAt(ua, name) >= 0
}

// ShowsAt is the index where ua shows name (see Shows), -1 if nowhere.
func ShowsAt(ua, name string) int {
	if name == "" {
		return -1
	}
	for i := 0; i+len(name) <= len(ua); i++ {
		if !strings.EqualFold(ua[i:i+len(name)], name) {
			continue
		}
		if i > 0 && (isWordByte(ua[i-1]) || strings.IndexByte(".@:=", ua[i-1]) >= 0) {
			continue
		}
		if j := i + len(name); j < len(ua) && (isWordByte(ua[j]) && !isVersion(ua[j:]) || ua[j] == '@' ||
			ua[j] == '.' && j+1 < len(ua) && isAlnum(ua[j+1])) {
			continue
		}
		if InURL(ua, i) {
			continue
		}
		return i
	}
	return -1
}

// isVersion reports whether s starts with "-", "_" or "." and a digit:
// a version joined to a name ("larbin_2.6.2", "yoozBot-2.2").
func isVersion(s string) bool {
	return len(s) > 1 && (s[0] == '-' || s[0] == '_' || s[0] == '.') && '0' <= s[1] && s[1] <= '9'
}

// StartsWord reports whether ua holds name, ASCII case-insensitively,
// where a word starts (not after a letter or a digit), wherever that is
// and whatever follows, as a crawler-user-agents pattern matches:
// "bingbot" in "http://www.bing.com/bingbot.htm", "httpx" in
// "python-httpx/0.16", "findlink" in "findlinks/2.0", but not "exabot" in
// "Alexabot/1.0".
func StartsWord(ua, name string) bool {
	for i := 0; name != "" && i+len(name) <= len(ua); i++ {
		if strings.EqualFold(ua[i:i+len(name)], name) && (i == 0 || !isAlnum(ua[i-1])) {
			return true
		}
	}
	return false
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_'
}

// InURL reports whether ua[i] lies in a URL or an e-mail address: its
// run of octets between white space, ";", ",", parentheses and quotes
// holds "://" or "@", or starts with "www.".
func InURL(ua string, i int) bool {
	const stops = " \t;,()\"'[]<>"
	start := strings.LastIndexAny(ua[:i], stops) + 1
	end := strings.IndexAny(ua[i:], stops)
	if end < 0 {
		end = len(ua)
	} else {
		end += i
	}
	chunk := ua[start:end]
	return strings.Contains(chunk, "://") || strings.Contains(chunk, "@") || strings.HasPrefix(strings.ToLower(chunk), "www.")
}

// leadingName returns the name a user-agent line whose value is s names
// whole (robots.IsAgentName), after any leading octets that cannot start
// one: " sentry/" gives "sentry", "Yahoo! Slurp" "Yahoo!", "Googlebot/"
// "Googlebot"; "" when there is none.
func leadingName(s string) string {
	i := 0
	for i < len(s) && !robots.IsTokenChar(s[i]) {
		i++
	}
	j := i
	for j < len(s) && robots.IsTokenChar(s[j]) {
		j++
	}
	if n := s[i:j]; robots.IsAgentName(n) {
		return n
	}
	return ""
}

// robotsKeys returns the names a user-agent line with value v is filed
// under (see robots.Parse): its product token (the leading letters, "_"
// and "-") and its whole leading name, lower-cased.
func robotsKeys(v string) []string {
	v = strings.ToLower(strings.TrimSpace(v))
	i := 0
	for i < len(v) && robots.IsIdentChar(v[i]) {
		i++
	}
	keys := []string{}
	if i > 0 {
		keys = append(keys, v[:i])
	}
	if n := leadingName(v); n != "" && n != v[:i] && strings.HasPrefix(v, n) {
		keys = append(keys, n)
	}
	return keys
}

// entryNames derives a crawler-user-agents entry's names from its
// literals: the leading name of each (what a user-agent line starting
// with that literal names), kept when one of the entry's instances shows
// it (Shows), spelt as the first such instance does, most written in
// robots.txt files (written) first.
func entryNames(lits, instances []string, written map[string]int64) []string {
	var names []string
	for _, l := range lits {
		n := leadingName(strings.TrimSuffix(strings.TrimPrefix(l, Begin), End))
		if n == "" {
			continue
		}
		spelt := ""
		for _, ua := range instances {
			if i := ShowsAt(ua, n); i >= 0 {
				spelt = ua[i : i+len(n)]
				break
			}
		}
		if spelt == "" && len(instances) > 0 {
			continue // the literal is part of a word, a URL or a path in every instance
		}
		if spelt == "" {
			spelt = n
		}
		if !containsFold1(names, spelt) {
			names = append(names, spelt)
		}
	}
	sortByWritten(names, written)
	return names
}

// literalTerms returns the leading names of lits (leadingName), each
// once: the names a pattern's text gives the crawler, whether or not an
// instance shows them as words.
func literalTerms(lits []string) []string {
	var out []string
	for _, l := range lits {
		if n := leadingName(strings.TrimSuffix(strings.TrimPrefix(l, Begin), End)); n != "" && !containsFold1(out, n) {
			out = append(out, n)
		}
	}
	return out
}

func containsFold1(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// sortByWritten orders names by how often robots.txt files write them,
// most first; ties keep their order.
func sortByWritten(names []string, written map[string]int64) {
	for i := 1; i < len(names); i++ {
		for j := i; j > 0 && written[strings.ToLower(names[j])] > written[strings.ToLower(names[j-1])]; j-- {
			names[j], names[j-1] = names[j-1], names[j]
		}
	}
}
