package accesslog

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/identity/catalogue"
	"github.com/robotsproxy/robotsproxy/internal/ipranges"
	"github.com/robotsproxy/robotsproxy/internal/suggest"
)

// KnownTokens are the product tokens audit access-log knows without a
// log: those of the published ranges files (ipranges.Sources), the names
// of the crawler catalogue (catalogue.Embedded), and the crawlers with DNS
// domains (DefaultDomains); each as first written there.
func KnownTokens() []string {
	out := ipranges.Tokens(ipranges.Sources())
	for _, e := range catalogue.Embedded().Entries {
		out = append(out, e.Names...)
	}
	return append(out, slices.Sorted(maps.Keys(DefaultDomains()))...)
}

// CheckGivenTokens returns an error for the first token given with
// -ip-ranges TOKEN=... that is neither in known nor claimed by a request
// of r (a misspelling: "Googlbot"), naming the nearest name of either.
func CheckGivenTokens(given []string, r *Result, known []string) error {
	names := map[string]string{}
	add := func(name string) {
		if k := strings.ToLower(name); names[k] == "" {
			names[k] = name // the first spelling: a catalogue's, before the log's
		}
	}
	for _, k := range known {
		add(k)
	}
	for _, c := range r.Crawlers {
		add(c.Token)
	}
	for _, tr := range r.Summary.IPRanges {
		if tr.Requests > 0 {
			add(tr.Token)
		}
	}
	for _, g := range given {
		if _, ok := names[strings.ToLower(g)]; ok {
			continue
		}
		msg := fmt.Sprintf("-ip-ranges %s=...: no crawler of that name is known or in the logs", g)
		if n := nearest(g, names); n != "" {
			msg += fmt.Sprintf("; did you mean %s?", n)
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// nearest returns the name of names (lower-cased key to name) nearest to
// s by edit distance, ignoring case; the shortest, then first in order,
// among equals.
func nearest(s string, names map[string]string) string {
	best, bestD := "", -1
	for _, k := range slices.Sorted(maps.Keys(names)) {
		d := suggest.Distance(strings.ToLower(s), k)
		if bestD < 0 || d < bestD {
			best, bestD = names[k], d
		}
	}
	return best
}
