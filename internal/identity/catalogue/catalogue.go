// Package catalogue is robotsproxy's crawler catalogue: the crawlers that
// maintained public lists know, each with the names a robots.txt file
// calls it by and how to recognise it in a User-Agent header.
//
// The data is built (Build, run by "go generate ./internal/identity/")
// from upstream files and embedded: data/catalogue.json, with the
// sources' licences beside it. Nothing in it is written by hand:
//
//   - monperrus/crawler-user-agents (MIT): a regexp per crawler, with real
//     User-Agent headers it matches and tags ("search-engine",
//     "http-library", ...);
//   - ai-robots-txt/ai.robots.txt (MIT): the product tokens of AI
//     crawlers, with operator, function and whether they respect
//     robots.txt;
//   - commoncrawl/robotstxt-experiments (MIT): the user-agent values that
//     sites write in robots.txt, by frequency, which orders a crawler's
//     names.
//
//go:generate go run ./gen -agents ../../../testdata/agents -manifest ../../../testdata/MANIFEST.tsv -out data
package catalogue

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Sources of the catalogue's entries (Entry.Source).
const (
	SourceCrawlerUserAgents = "crawler-user-agents"
	SourceAIRobotsTxt       = "ai.robots.txt"
	SourceCommonCrawl       = "commoncrawl-robotstxt-experiments"
)

// Classes of an entry (Entry.Class).
const (
	// ClassCrawler is a crawler, a bot or an agent.
	ClassCrawler = "crawler"
	// ClassOther is an HTTP library or tool (crawler-user-agents tags
	// its entry only "http-library" or "browser-automation").
	ClassOther = "other"
)

// Source is one upstream file the catalogue was built from.
type Source struct {
	// Name is SourceCrawlerUserAgents, SourceAIRobotsTxt or
	// SourceCommonCrawl.
	Name string `json:"name"`
	// Repository is the GitHub owner/name, Path the file in it and
	// Commit the full commit hash it was read at.
	Repository string `json:"repository"`
	Path       string `json:"path"`
	Commit     string `json:"commit"`
	// License is the licence's SPDX identifier, and LicenseText its
	// text as the source gives it (also data/LICENSE.<Name>), so that the
	// binary that embeds the data carries its notice.
	License     string `json:"license"`
	LicenseText string `json:"license_text"`
}

// Entry is one crawler of the catalogue.
type Entry struct {
	// Source is where the entry comes from.
	Source string `json:"source"`
	// Names are the names a robots.txt user-agent line calls the crawler
	// by, the one sites write most first: robots.IsAgentName names, each
	// shown in the entry's instances as a word of its own. Empty when the
	// pattern names no single product ("yandex\.com\/bots"): the entry
	// then classifies a header and names nothing.
	Names []string `json:"names,omitempty"`
	// Terms are the names the pattern's text gives the crawler: the
	// leading name of each literal ("bingbot", "Teoma", "grub.org"). A
	// header the pattern matches has them among its candidates where it
	// holds them at the start of a word, shown or not: inside a URL
	// ("http://www.bing.com/bingbot.htm") or joined to more
	// ("msnbot-media"), as the pattern matched it.
	Terms []string `json:"terms,omitempty"`
	// Class is ClassCrawler or ClassOther.
	Class string `json:"class"`
	// Pattern is crawler-user-agents' regexp, "" for an ai.robots.txt
	// entry (matched by its name as a product of the header).
	Pattern string `json:"pattern,omitempty"`
	// Literals are what a header the pattern matches contains (Literals):
	// Exact when containing one means a match, else the regexp decides.
	Literals []string `json:"literals,omitempty"`
	Exact    bool     `json:"exact,omitempty"`
	// Tags are crawler-user-agents' tags.
	Tags []string `json:"tags,omitempty"`
	// URL is the crawler's documentation.
	URL string `json:"url,omitempty"`
	// Token is the ai.robots.txt product token as written there
	// ("ChatGPT Agent"); its first word is the first name.
	Token string `json:"token,omitempty"`
	// Operator, Function and Respect are ai.robots.txt's fields, as
	// written there (Markdown).
	Operator string `json:"operator,omitempty"`
	Function string `json:"function,omitempty"`
	Respect  string `json:"respect,omitempty"`
}

// Name is the entry's first name, "" when it has none.
func (e *Entry) Name() string {
	if len(e.Names) == 0 {
		return ""
	}
	return e.Names[0]
}

// File is the catalogue as data/catalogue.json holds it.
type File struct {
	Sources []Source `json:"sources"`
	Entries []Entry  `json:"entries"`
	// Left are the crawler-user-agents patterns left out because they
	// name no product: a number or a build ID (see Build).
	Left []string `json:"left_out,omitempty"`
}

// Version names the catalogue's data: each source and the commit it was
// read at, "crawler-user-agents@7c7f9f254f16 ai.robots.txt@738c80df2169
// commoncrawl-robotstxt-experiments@ce24ddafe1d8". Reports print it.
func (f *File) Version() string {
	var parts []string
	for _, s := range f.Sources {
		c := s.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		parts = append(parts, s.Name+"@"+c)
	}
	return strings.Join(parts, " ")
}

//go:embed data/catalogue.json
var embedded []byte

// Embedded returns the catalogue built into the binary, parsed and
// compiled on first use; it panics if the embedded data is broken, which
// TestEmbedded rules out.
var Embedded = sync.OnceValue(func() *Catalogue {
	c, err := Parse(embedded)
	if err != nil {
		panic(fmt.Sprintf("embedded crawler catalogue: %v", err))
	}
	return c
})

// Parse reads a catalogue file and compiles it for matching.
func Parse(data []byte) (*Catalogue, error) {
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("crawler catalogue: %w", err)
	}
	return Compile(&f)
}

// Compile prepares f for matching; an error is an entry whose pattern
// does not compile or that has no way to be matched.
func Compile(f *File) (*Catalogue, error) {
	c := &Catalogue{File: f, names: map[string][]int{}, regexps: make([]*regexp.Regexp, len(f.Entries))}
	for i := range f.Entries {
		e := &f.Entries[i]
		switch {
		case e.Pattern != "":
			if !e.Exact {
				re, err := regexp.Compile(e.Pattern)
				if err != nil {
					return nil, fmt.Errorf("crawler catalogue: entry %d: %w", i, err)
				}
				c.regexps[i] = re
			}
			if len(e.Literals) == 0 {
				return nil, fmt.Errorf("crawler catalogue: entry %d (%q): no literals", i, e.Pattern)
			}
			for _, l := range e.Literals {
				c.lits.add(l, int32(i))
			}
		case len(e.Names) > 0:
			k := strings.ToLower(e.Names[0])
			c.names[k] = append(c.names[k], i)
		default:
			return nil, fmt.Errorf("crawler catalogue: entry %d: neither pattern nor name", i)
		}
	}
	return c, nil
}
