// Package uaparser names the family of the client a User-Agent header
// shows ("UC Browser", "NCSA Mosaic", "curl") with ua-parser's data: the
// user_agent_parsers of uap-core's regexes.yaml (Apache-2.0), the
// maintained rules that ua-parser's libraries in every language share,
// and the device_parsers that uap-core files under "Spider", its mark of
// a crawler. ua-parser's Go library (github.com/ua-parser/uap-go) runs
// them, as uap-core's specification says: the first rule whose regexp
// matches names the family, "Other" when none does.
//
// The data is built (Build, run by "go generate ./internal/identity/...")
// from the copy of regexes.yaml in testdata/agents/uap-core and embedded:
// data/regexes.yaml, with uap-core's licence beside it. Nothing in it is
// written by hand. It is parsed and compiled on first use (some 430
// regexps, tens of milliseconds), so that a process that never asks pays
// nothing.
//
//go:generate go run ./gen -agents ../../../testdata/agents -manifest ../../../testdata/MANIFEST.tsv -out data
package uaparser

import (
	_ "embed"
	"fmt"
	"sync"

	uap "github.com/ua-parser/uap-go/uaparser"
	"go.yaml.in/yaml/v3"
)

// Other is the family of a header no rule matches (uap-core's name).
const Other = "Other"

// spider is the device uap-core gives a crawler.
const spider = "Spider"

// Source is the upstream file the data was built from.
type Source struct {
	// Repository is the GitHub owner/name, Path the file in it and
	// Commit the full commit hash it was read at.
	Repository string `yaml:"repository"`
	Path       string `yaml:"path"`
	Commit     string `yaml:"commit"`
	// License is the licence's SPDX identifier, and LicenseText its text
	// as the source gives it (data/LICENSE.uap-core), so that the binary
	// that embeds the data carries its notice.
	License     string `yaml:"license"`
	LicenseText string `yaml:"-"`
}

// Version names the data: "uap-core@" and the first 12 hex digits of its
// commit.
func (s Source) Version() string {
	c := s.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	return "uap-core@" + c
}

// Parser names families and spiders with ua-parser's Go library. It is
// safe for concurrent use.
type Parser struct {
	// Source is where the data comes from.
	Source Source
	// Families and Spiders count the rules of each kind.
	Families, Spiders int
	p                 *uap.Parser
}

// Parse reads data of data/regexes.yaml's layout (a regexes.yaml of
// uap-core's, with a source) and compiles it. An error is data that does
// not decode or a rule Go's regexp rejects.
func Parse(data []byte, licenseText string) (*Parser, error) {
	var f struct {
		Source               Source `yaml:"source"`
		uap.RegexDefinitions `yaml:",inline"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("ua-parser data: %w", err)
	}
	p, err := compileRules(f.RegexDefinitions)
	if err != nil {
		return nil, fmt.Errorf("ua-parser data: %w", err)
	}
	f.Source.LicenseText = licenseText
	return &Parser{Source: f.Source, Families: len(f.UA), Spiders: len(f.Device), p: p}, nil
}

// compileRules gives the rules to ua-parser's Go library, which compiles
// them and panics on one that Go's regexp rejects: that is an error here.
// The library keeps its own cache of parsed headers; identity remembers
// its answers itself, so the library's is kept at its least.
func compileRules(def uap.RegexDefinitions) (p *uap.Parser, err error) {
	defer func() {
		if r := recover(); r != nil {
			p, err = nil, fmt.Errorf("a rule Go's regexp rejects: %v", r)
		}
	}()
	return uap.New(uap.WithRegexDefinitions(def), uap.WithCacheSize(1),
		uap.WithMode(uap.EUserAgentLookUpMode|uap.EDeviceLookUpMode))
}

// Family returns the family of ua: the family of the first
// user_agent_parsers rule that matches and gives one; Other when none
// does. Its cost is that of running the rules up to the one that
// matches: a fraction of a millisecond for a short header, more for a
// long one.
func (p *Parser) Family(ua string) string {
	return p.p.ParseUserAgent(ua).Family
}

// Spider reports whether uap-core's device rules file ua under "Spider",
// its mark of a crawler.
func (p *Parser) Spider(ua string) bool {
	return p.p.ParseDevice(ua).Family == spider
}

var (
	//go:embed data/regexes.yaml
	embedded []byte
	//go:embed data/LICENSE.uap-core
	embeddedLicense string
)

// EmbeddedSource returns the source of the data built into the binary,
// read without compiling its rules (which allocates some 12 MB).
var EmbeddedSource = sync.OnceValue(func() Source {
	var f struct {
		Source Source `yaml:"source"`
	}
	if err := yaml.Unmarshal(embedded, &f); err != nil {
		panic(fmt.Sprintf("embedded ua-parser data: %v", err))
	}
	f.Source.LicenseText = embeddedLicense
	return f.Source
})

// Embedded returns the parser built into the binary, parsed and compiled
// on first use; it panics if the embedded data is broken, which
// TestEmbeddedIsBuilt rules out.
var Embedded = sync.OnceValue(func() *Parser {
	p, err := Parse(embedded, embeddedLicense)
	if err != nil {
		panic(fmt.Sprintf("embedded ua-parser data: %v", err))
	}
	return p
})
