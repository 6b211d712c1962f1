// Package check implements "robotsproxy check": it decides URLs against a
// local robots.txt file for one crawler, as the proxy would on a successful
// access, and explains each decision, with the other records of the
// crawler's groups and the usage preferences that apply to each URL.
package check

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/robotsproxy/robotsproxy/identity"
	"github.com/robotsproxy/robotsproxy/robots"
)

// Options configure a check run.
type Options struct {
	// JSON writes one JSON object per URL instead of text lines.
	JSON bool
	// Stdin is read, one URL per line, for the URL "-".
	Stdin io.Reader
	// Stdout receives one line per URL.
	Stdout io.Writer
	// Usage is a purpose, a usage category label such as "train-ai",
	// "search" or "ai-input" (-usage): the preference that applies to each
	// URL for it is written, from Content-Usage rules and from the
	// Content-Signal of that name. "" writes none in text output.
	Usage string
}

// Result is the JSON form of one URL's decision.
type Result struct {
	URL           string   `json:"url"`
	Allowed       bool     `json:"allowed"`
	ProductTokens []string `json:"product_tokens"`
	Group         string   `json:"group,omitempty"`
	Groups        []Group  `json:"groups"`
	Rule          *Rule    `json:"rule,omitempty"`
	StarFallback  bool     `json:"star_fallback"`
	Implicit      bool     `json:"implicit_robots_txt,omitempty"`
	// The other records of the crawler's groups and file (the same for
	// every URL), null or empty when the file has none.
	CrawlDelay    *CrawlDelay       `json:"crawl_delay"`
	RequestRate   *RequestRate      `json:"request_rate"`
	Sitemaps      []string          `json:"sitemaps"`
	ContentSignal map[string]Signal `json:"content_signal"`
	// ContentUsage is what the Content-Usage rules say of this URL.
	ContentUsage ContentUsage `json:"content_usage"`
	// Usage answers -usage PURPOSE; omitted without it.
	Usage *UsageResult `json:"usage,omitempty"`
}

// Group is a matched group: where it starts and whom it names.
type Group struct {
	Line   int      `json:"line"`
	Agents []string `json:"agents"`
}

// Rule is the deciding rule.
type Rule struct {
	Text  string `json:"text"`
	Line  int    `json:"line"`
	Allow bool   `json:"allow"`
}

// Run decides each URL for the crawler named by userAgent (a bare product
// token or a whole User-Agent header) against the robots.txt file at path.
// It reports whether every URL was allowed. Errors are I/O errors, and an
// Options.Usage that is not a usage category label (robots.IsUsageLabel).
func Run(path, userAgent string, urls []string, o Options) (bool, error) {
	if o.Usage != "" && !robots.IsUsageLabel(o.Usage) {
		return false, fmt.Errorf("-usage %q: not a usage label (a lower-case letter or \"*\", then lower-case letters, digits, \"_\", \"-\", \".\", \"*\")", o.Usage)
	}
	body, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read robots.txt: %w", err)
	}
	c := checker{
		robots: robots.Parse(body),
		id:     identity.NewIdentifier(identity.DefaultBrowserTokens(), nil).Identify(userAgent),
		out:    bufio.NewWriter(o.Stdout),
		json:   o.JSON,
		usage:  o.Usage,
		all:    true,
	}
	c.extras = newFileExtras(c.robots, c.id.Candidates)
	for _, u := range urls {
		if u == "-" {
			if err := c.stream(o.Stdin); err != nil {
				return false, err
			}
			continue
		}
		c.decide(u)
	}
	if err := c.out.Flush(); err != nil {
		return false, fmt.Errorf("write: %w", err)
	}
	return c.all, c.err
}

type checker struct {
	robots *robots.Robots
	id     identity.Identity
	out    *bufio.Writer
	json   bool
	usage  string
	extras fileExtras
	all    bool
	err    error
}

// asciiSpace is the white space trimmed from a URL line read from stdin:
// ASCII only, since Unicode spaces such as U+00A0 may be part of a URL.
const asciiSpace = " \t\r\n\v\f"

// stream decides URLs read from r, one per line, in constant memory. The
// line terminator (LF or CRLF) and the ASCII white space around the URL are
// removed; nothing else is.
func (c *checker) stream(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if u := strings.Trim(sc.Text(), asciiSpace); u != "" {
			c.decide(u)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("read URLs from stdin: %w", err)
	}
	return nil
}

// decide writes the decision for one URL.
func (c *checker) decide(u string) {
	up := c.robots.Usage(robots.PathOf(u), c.id.Candidates...)
	if !up.Verdict.Allowed {
		c.all = false
	}
	var err error
	if c.json {
		err = c.writeJSON(u, up)
	} else {
		err = c.writeText(u, up)
	}
	if err != nil && c.err == nil {
		c.err = fmt.Errorf("write: %w", err)
	}
}

func (c *checker) writeText(u string, up robots.UsagePrefs) error {
	v := up.Verdict
	word := "ALLOWED"
	if !v.Allowed {
		word = "DISALLOWED"
	}
	usage := ""
	if c.usage != "" {
		usage = "\t" + c.extras.usageText(up, c.usage)
	}
	_, err := fmt.Fprintf(c.out, "%s %s\t%s%s\n", word, u, detail(v), usage)
	return err
}

// detail explains a verdict in a few words.
func detail(v robots.Verdict) string {
	group := "group " + v.Agent
	switch {
	case v.Implicit:
		return "/robots.txt is always allowed"
	case v.Agent == "":
		return "no group applies"
	case v.Fallback:
		group = "group * (fallback)"
	}
	if !v.Matched() {
		return group + ": no matching rule"
	}
	return fmt.Sprintf("%s: line %d: %s", group, v.Rule.Line, v.Rule.Text())
}

func (c *checker) writeJSON(u string, up robots.UsagePrefs) error {
	v := up.Verdict
	res := Result{
		URL:           u,
		Allowed:       v.Allowed,
		ProductTokens: c.id.Candidates,
		Group:         v.Agent,
		Groups:        []Group{},
		StarFallback:  v.Fallback,
		Implicit:      v.Implicit,
		CrawlDelay:    c.extras.crawlDelay,
		RequestRate:   c.extras.requestRate,
		Sitemaps:      c.extras.sitemaps,
		ContentSignal: c.extras.signals,
		ContentUsage:  contentUsage(up, c.usage),
	}
	if c.usage != "" {
		r := c.extras.usageResult(up, c.usage)
		res.Usage = &r
	}
	if res.ProductTokens == nil {
		res.ProductTokens = []string{}
	}
	for _, gi := range v.Groups() {
		g := c.robots.Group(gi)
		res.Groups = append(res.Groups, Group{Line: g.Line, Agents: g.Agents})
	}
	if v.Matched() {
		res.Rule = &Rule{Text: v.Rule.Text(), Line: v.Rule.Line, Allow: v.Rule.Allow}
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	_, err = c.out.Write(b)
	return err
}
