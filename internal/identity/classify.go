package identity

import (
	"slices"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/identity/catalogue"
	"github.com/robotsproxy/robotsproxy/internal/identity/uaparser"
)

// Client is what kind of client a User-Agent header shows; the zero
// value is none (a pinned identity). One octet, so that Identity, which
// every decision carries, stays small.
type Client uint8

const (
	// ClientCrawler: the crawler catalogue knows it as a crawler, or the
	// header declares a bot: a "+http" contact, "bot", "crawl" or
	// "spider" in a product's name, or the word "bot", "robot",
	// "crawler" or "spider" outside a URL. A header of no browser's shape
	// is a crawler's too when ua-parser's data (package uaparser) files it
	// under "Spider" or names it a family that declares a bot.
	ClientCrawler Client = iota + 1
	// ClientBrowser: nothing marks the header a crawler's or a known
	// library's, and it is shaped like a browser's (see BrowserShaped),
	// or ua-parser's data names its family (the browsers with no
	// browser's shape: "J2ME/UCWEB7.0.3.45/139/7682" is UC Browser,
	// "NCSA_Mosaic/2.0 (Windows 3.1)" NCSA Mosaic) and it carries no URL.
	ClientBrowser
	// ClientOther: a library or tool (curl, python-requests,
	// Go-http-client, ...): the catalogue knows it as one, or the header
	// is neither a crawler's nor a browser's.
	ClientOther
)

// String is "crawler", "browser", "other" (the crawler catalogue's class
// names, catalogue.ClassCrawler and ClassOther), or "" for none.
func (c Client) String() string {
	switch c {
	case ClientCrawler:
		return catalogue.ClassCrawler
	case ClientBrowser:
		return "browser"
	case ClientOther:
		return catalogue.ClassOther
	}
	return ""
}

// recognition is what the catalogue knows of a header.
type recognition struct {
	// names are the names of the recognised crawlers that the header
	// shows, the credited one first.
	names []string
	// terms are the pattern entries' terms the header holds at the
	// start of a word (catalogue.Entry.Terms).
	terms []string
	// known is 1 + the index of names[0]'s entry, else of the first
	// recognised entry; 0 for none.
	known int32
	// crawler and other: an entry of that class matched.
	crawler, other bool
}

// recognise matches ua against the catalogue: its pattern entries
// (crawler-user-agents) by their patterns, and its name entries
// (ai.robots.txt) by the header's products. The credited crawler is the
// pattern entry whose name the header shows first, a crawler before a
// library or tool ("HeadlessChrome/87 YextBot/Java" is YextBot), else the
// first name entry.
func (id *Identifier) recognise(ua string, products []string) recognition {
	var buf [8]int
	idx := id.cat.Match(buf[:0], ua)
	nPattern := len(idx)
	for _, p := range products {
		idx = id.cat.Named(idx, p, ua)
	}
	var r recognition
	best, bestAt, bestCrawler := -1, -1, false
	for k, i := range idx {
		e := &id.cat.Entries[i]
		if e.Class == catalogue.ClassCrawler {
			r.crawler = true
		} else {
			r.other = true
		}
		for _, n := range e.Terms {
			if catalogue.StartsWord(ua, n) {
				r.terms = append(r.terms, n)
			}
		}
		for _, n := range e.Names {
			at := catalogue.ShowsAt(ua, n)
			if at < 0 {
				continue
			}
			r.names = append(r.names, n)
			crawler := e.Class == catalogue.ClassCrawler
			if better := k < nPattern && (crawler && !bestCrawler || crawler == bestCrawler && at < bestAt); best < 0 || better {
				best, bestAt, bestCrawler = len(r.names)-1, at, crawler
				r.known = int32(i) + 1
			}
		}
	}
	if best > 0 {
		r.names[0], r.names[best] = r.names[best], r.names[0]
	}
	if r.known == 0 && len(idx) > 0 {
		r.known = int32(idx[0]) + 1
	}
	return r
}

// classify says what kind of client ua is, given its products and what
// the catalogue recognised in it. byFamily reports that ua-parser's data
// may decide otherwise, when asked (Identifier.byFamily): for a header
// that nothing in it decides (no crawler's mark, no known library, no
// browser's shape), and for a browser-shaped header that a catalogue
// pattern matched only inside other words, showing none of the
// crawler's names (crawler-user-agents' "Sogou" in
// "SogouMSE,SogouMobileBrowser/3.7.4").
func classify(ua string, products []string, r recognition) (c Client, byFamily bool) {
	if r.crawler && len(r.names) > 0 {
		return ClientCrawler, false // the usual case: nothing else to read
	}
	lower := strings.ToLower(ua)
	if strings.Contains(lower, "+http") || botWord(ua) || slices.ContainsFunc(products, declaresBot) {
		return ClientCrawler, false
	}
	shaped := browserShaped(ua, lower, products)
	switch {
	case r.crawler:
		return ClientCrawler, shaped && len(r.names) == 0
	case r.other:
		return ClientOther, false
	case shaped:
		return ClientBrowser, false
	}
	return ClientOther, true
}

// byFamily classifies a header that classify left to ua-parser's data,
// c being classify's answer: a crawler when uap-core files it under
// "Spider" or names a family that declares a bot; a browser when it
// names another family and the header carries neither a URL (a contact,
// an automated client's mark) nor "compatible" (how a client that is no
// browser declares itself like one: "Nokia6230/2.0 (compatible;
// Zyxel/1.0)", which uap-core reads as a Nokia phone's); else c.
// uap-core names libraries' and apps' families too ("aws-sdk-go",
// "Outlook"): the ones the crawler catalogue does not know as libraries
// count as browsers (see docs/auditing.md).
func (id *Identifier) byFamily(ua string, c Client) Client {
	p := id.families()
	if p.Spider(ua) {
		return ClientCrawler
	}
	switch f := p.Family(ua); {
	case declaresBot(f):
		return ClientCrawler
	case f == uaparser.Other || hasURL(ua) || containsFoldASCII(ua, "compatible"):
		return c
	}
	return ClientBrowser
}

// hasURL reports whether ua holds "http://" or "https://", ASCII
// case-insensitively.
func hasURL(ua string) bool {
	return containsFoldASCII(ua, "http://") || containsFoldASCII(ua, "https://")
}

// declaresBot reports whether a product's name says it is a bot: it
// holds "bot", "crawl" or "spider", ASCII case-insensitively.
func declaresBot(name string) bool {
	for _, w := range [...]string{"bot", "crawl", "spider"} {
		if containsFoldASCII(name, w) {
			return true
		}
	}
	return false
}

// botWord reports whether ua has the word "bot", "robot", "crawler" or
// "spider" of its own (letters on neither side), outside URLs: "Y!J-BRW/1.0
// crawler (http://...)".
func botWord(ua string) bool {
	for i := 0; i < len(ua); {
		if !isLetter(rune(ua[i])) {
			i++
			continue
		}
		j := i
		for j < len(ua) && isLetter(rune(ua[j])) {
			j++
		}
		switch w := ua[i:j]; {
		case strings.EqualFold(w, "bot") || strings.EqualFold(w, "robot") || strings.EqualFold(w, "crawler") || strings.EqualFold(w, "spider"):
			if !catalogue.InURL(ua, i) {
				return true
			}
		}
		i = j
	}
	return false
}

func containsFoldASCII(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}

// BrowserShaped reports whether ua has a browser's shape: a rendering
// engine's mark (Gecko, WebKit, KHTML, Trident, Presto, Goanna, LibWeb,
// NetFront, Obigo, MSIE; ELinks, Lynx, w3m; HbbTV), a product that declares a browser ("browser"
// in its name: "UCBrowser/9.3", "UP.Browser/6.2", "OneBrowser/3.0"), or a
// platform comment ("Mozilla/5.0 (PLAYSTATION 3; 3.55)", "Opera/9.30
// (Nintendo Wii; ...)": a comment after "Mozilla/N" or "Opera/N", the
// two products browsers lead with, whose first item is not "compatible",
// the mark of a crawler's header). Whether something marks it a crawler is
// Classify's question, not this one's.
func BrowserShaped(ua string) bool {
	return browserShaped(ua, strings.ToLower(ua), ProductNames(ua))
}

// browserShaped is BrowserShaped given ua lower-cased and its products.
func browserShaped(ua, lower string, products []string) bool {
	return hasEngine(lower) || mozillaPlatform(ua) || declaresBrowser(products)
}

// engineMarks are the rendering engines' marks in a browser's header,
// lower-cased: the graphical ones, the text-mode browsers' (ELinks,
// Lynx, w3m), and HbbTV's, the ETSI standard for TV browsers, whose
// header must carry it.
var engineMarks = [...]string{"gecko", "webkit", "khtml", "trident/", "presto/", "goanna/", "libweb", "netfront", "obigo", "msie ",
	"elinks", "lynx/", "w3m/", "hbbtv/"}

// hasEngine reports whether lower, a lower-cased header, has an engine
// mark.
func hasEngine(lower string) bool {
	for _, e := range engineMarks {
		if strings.Contains(lower, e) {
			return true
		}
	}
	return false
}

func declaresBrowser(products []string) bool {
	for _, p := range products {
		if containsFoldASCII(p, "browser") {
			return true
		}
	}
	return false
}

// mozillaPlatform reports whether ua has "Mozilla/N" or "Opera/N"
// followed by a comment whose first item is not "compatible".
func mozillaPlatform(ua string) bool {
	return leadPlatform(ua, "Mozilla/") || leadPlatform(ua, "Opera/")
}

func leadPlatform(ua, lead string) bool {
	i := strings.Index(ua, lead)
	if i < 0 {
		return false
	}
	rest := ua[i+len(lead):]
	j := strings.IndexByte(rest, ' ')
	if j < 0 {
		return false
	}
	rest = strings.TrimLeft(rest[j:], " ")
	if !strings.HasPrefix(rest, "(") {
		return false
	}
	first, _, _ := strings.Cut(rest[1:], ";")
	first = strings.TrimSpace(strings.TrimSuffix(first, ")"))
	return first != "" && !strings.EqualFold(first, "compatible")
}
