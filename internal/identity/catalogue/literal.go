package catalogue

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"unicode"
)

// Anchor marks in a literal: Begin at its start means the literal must
// start the User-Agent, End at its end that it must end it.
const (
	Begin = "^"
	End   = "$"
)

// maxLiterals bounds the alternatives a pattern expands to; past it, the
// pattern is matched by its longest required literal and the regexp.
const maxLiterals = 64

// minLiteral is the shortest required literal accepted as a prefilter.
const minLiteral = 3

// Literals analyses a crawler-user-agents pattern (a Go/RE2 regexp, as
// upstream's own Go package reads it: case-sensitive, unanchored) for
// matching without running it:
//
//   - exact: every text the pattern matches contains one of lits, and
//     every text that contains one matches. "[wW]get" gives "wget" and
//     "Wget"; "^curl" gives "^curl" (Begin: at the start only).
//   - not exact: every text the pattern matches contains lits[0], its
//     longest required literal, and a text that contains it must still be
//     matched with the regexp: "ContextualBot[\s\S]*outcomes\.net" gives
//     "outcomes.net".
//
// An error is a pattern that does not compile, or one with no required
// literal of at least 3 octets (it would have to run on every header).
func Literals(pattern string) (lits []string, exact bool, err error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return nil, false, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	re = re.Simplify()
	if alts, ok := expand(re); ok {
		out := alts[:0]
		for _, a := range alts {
			if a, ok := normalAnchors(a); ok {
				out = append(out, a)
			}
		}
		if len(out) > 0 && !hasShort(out) {
			return dedupe(out), true, nil
		}
	}
	if l := required(re); len(l) >= minLiteral {
		return []string{l}, false, nil
	}
	return nil, false, fmt.Errorf("pattern %q: no required literal of %d octets or more", pattern, minLiteral)
}

// The anchors inside an expansion, as runes no User-Agent octet is.
const (
	beginRune = '\uFDD0'
	endRune   = '\uFDD1'
)

// normalAnchors turns the anchor runes of an expanded alternative into
// Begin and End; false when an anchor is not at its end of the text, so
// that the alternative can never match ("a^b").
func normalAnchors(s string) (string, bool) {
	begin := strings.HasPrefix(s, string(beginRune))
	s = strings.TrimLeft(s, string(beginRune))
	end := strings.HasSuffix(s, string(endRune))
	s = strings.TrimRight(s, string(endRune))
	if strings.ContainsRune(s, beginRune) || strings.ContainsRune(s, endRune) {
		return "", false
	}
	if begin {
		s = Begin + s
	}
	if end {
		s += End
	}
	return s, true
}

func hasShort(lits []string) bool {
	for _, l := range lits {
		if len(strings.TrimSuffix(strings.TrimPrefix(l, Begin), End)) < minLiteral {
			return true
		}
	}
	return false
}

func dedupe(lits []string) []string {
	seen := map[string]bool{}
	out := lits[:0]
	for _, l := range lits {
		if !seen[l] {
			seen[l] = true
			out = append(out, l)
		}
	}
	return out
}

// expand returns every text re matches exactly, anchors as beginRune and
// endRune; false when there are more than maxLiterals or re repeats.
func expand(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpLiteral:
		return foldCase(re, []string{string(re.Rune)})
	case syntax.OpCharClass:
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			if re.Rune[i+1]-re.Rune[i] >= maxLiterals {
				return nil, false
			}
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(r))
			}
		}
		if len(out) > maxLiterals {
			return nil, false
		}
		return out, true
	case syntax.OpBeginLine, syntax.OpBeginText:
		return []string{string(beginRune)}, true
	case syntax.OpEndLine, syntax.OpEndText:
		return []string{string(endRune)}, true
	case syntax.OpCapture:
		return expand(re.Sub[0])
	case syntax.OpQuest:
		sub, ok := expand(re.Sub[0])
		return append(sub, ""), ok && len(sub) < maxLiterals
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			sub, ok := expand(s)
			if !ok || len(out)*len(sub) > maxLiterals {
				return nil, false
			}
			next := make([]string, 0, len(out)*len(sub))
			for _, a := range out {
				for _, b := range sub {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out, true
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			sub, ok := expand(s)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
		}
		return out, len(out) <= maxLiterals
	}
	return nil, false
}

// foldCase expands lits into their case variants when re is
// case-insensitive.
func foldCase(re *syntax.Regexp, lits []string) ([]string, bool) {
	if re.Flags&syntax.FoldCase == 0 {
		return lits, true
	}
	var out []string
	for _, l := range lits {
		variants := []string{""}
		for _, r := range l {
			u, w := unicode.ToUpper(r), unicode.ToLower(r)
			var next []string
			for _, v := range variants {
				next = append(next, v+string(u))
				if w != u {
					next = append(next, v+string(w))
				}
			}
			if len(next) > maxLiterals {
				return nil, false
			}
			variants = next
		}
		out = append(out, variants...)
	}
	return out, len(out) <= maxLiterals
}

// required returns the longest literal every match of re contains, "" if
// none is known.
func required(re *syntax.Regexp) string {
	if re.Flags&syntax.FoldCase != 0 {
		return ""
	}
	switch re.Op {
	case syntax.OpLiteral:
		return string(re.Rune)
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		best := ""
		for _, s := range re.Sub {
			if l := required(s); len(l) > len(best) {
				best = l
			}
		}
		return best
	}
	return ""
}
