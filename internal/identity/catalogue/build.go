package catalogue

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Input is the upstream data the catalogue is built from.
type Input struct {
	// CrawlerUserAgents is crawler-user-agents.json.
	CrawlerUserAgents []byte
	// AIRobots is ai.robots.txt's robots.json.
	AIRobots []byte
	// Written is commoncrawl/robotstxt-experiments'
	// user-agents-frequent.csv: user-agent values that sites write, with
	// how often.
	Written []byte
	// Sources describe the three, in that order.
	Sources []Source
}

// Build derives the catalogue from in: every crawler-user-agents entry,
// with the literals of its pattern (Literals) and the names derived from
// them (see Entry.Names), then every ai.robots.txt product token that no
// earlier entry names. A pattern with a literal that holds no more
// letters than digits names no product and is left out (File.Left). An error is input that does not decode, or a
// pattern that cannot be matched.
func Build(in Input) (*File, error) {
	if len(in.Sources) != 3 {
		return nil, errors.New("build crawler catalogue: want the three sources described")
	}
	written, err := readWritten(in.Written)
	if err != nil {
		return nil, err
	}
	f := &File{Sources: in.Sources}
	var cua []struct {
		Pattern   string   `json:"pattern"`
		URL       string   `json:"url"`
		Instances []string `json:"instances"`
		Tags      []string `json:"tags"`
	}
	if err := json.Unmarshal(in.CrawlerUserAgents, &cua); err != nil {
		return nil, fmt.Errorf("build crawler catalogue: crawler-user-agents.json: %w", err)
	}
	for _, c := range cua {
		lits, exact, err := Literals(c.Pattern)
		if err != nil {
			return nil, fmt.Errorf("build crawler catalogue: crawler-user-agents.json: %w", err)
		}
		if !namesSomething(lits) {
			f.Left = append(f.Left, c.Pattern)
			continue
		}
		f.Entries = append(f.Entries, Entry{Source: SourceCrawlerUserAgents, Names: entryNames(lits, c.Instances, written), Terms: literalTerms(lits),
			Class: classOf(c.Tags), Pattern: c.Pattern, Literals: lits, Exact: exact, Tags: c.Tags, URL: c.URL})
	}
	ai, err := readAI(in.AIRobots)
	if err != nil {
		return nil, err
	}
	for _, e := range ai {
		if !namedBefore(f.Entries, e.Names[0]) {
			f.Entries = append(f.Entries, e)
		}
	}
	return f, nil
}

// namesSomething reports whether every literal holds more letters than
// digits: a pattern that is a number or a build ID ("008\/",
// "AP3A\.240617\.008") names no product, and matches the version numbers
// of browsers ("Opera Mini/4.4.39008/37.9178", "Build/AP3A.240617.008").
func namesSomething(lits []string) bool {
	for _, l := range lits {
		letters, digits := 0, 0
		for i := 0; i < len(l); i++ {
			switch c := l[i]; {
			case 'a' <= c|0x20 && c|0x20 <= 'z':
				letters++
			case '0' <= c && c <= '9':
				digits++
			}
		}
		if letters <= digits {
			return false
		}
	}
	return true
}

// classOf is ClassOther for an entry tagged only as an HTTP library or
// browser automation, else ClassCrawler.
func classOf(tags []string) string {
	for _, t := range tags {
		if t != "http-library" && t != "browser-automation" {
			return ClassCrawler
		}
	}
	if len(tags) == 0 {
		return ClassCrawler
	}
	return ClassOther
}

// namedBefore reports whether an ai.robots.txt entry already in entries
// has the first name name.
func namedBefore(entries []Entry, name string) bool {
	for i := range entries {
		if e := &entries[i]; e.Source == SourceAIRobotsTxt && strings.EqualFold(e.Names[0], name) {
			return true
		}
	}
	return false
}

// readAI reads robots.json in its order: an object of product tokens.
func readAI(data []byte) ([]Entry, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("build crawler catalogue: robots.json: want an object (%v)", err)
	}
	var out []Entry
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("build crawler catalogue: robots.json: %w", err)
		}
		token := t.(string)
		var v struct {
			Operator string `json:"operator"`
			Respect  string `json:"respect"`
			Function string `json:"function"`
		}
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("build crawler catalogue: robots.json: %s: %w", token, err)
		}
		n := leadingName(token)
		if n == "" {
			return nil, fmt.Errorf("build crawler catalogue: robots.json: %q names no product", token)
		}
		out = append(out, Entry{Source: SourceAIRobotsTxt, Names: []string{n}, Class: ClassCrawler, Token: token,
			Operator: v.Operator, Function: v.Function, Respect: v.Respect})
	}
	return out, nil
}

// readWritten sums user-agents-frequent.csv's counts by the names a
// user-agent line with each value is filed under (robotsKeys).
func readWritten(data []byte) (map[string]int64, error) {
	r := csv.NewReader(bytes.NewReader(data))
	rows, err := r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("build crawler catalogue: user-agents-frequent.csv: %w", err)
	}
	out := map[string]int64{}
	for i, row := range rows {
		if i == 0 || len(row) < 2 {
			continue // the header
		}
		n, err := strconv.ParseInt(row[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("build crawler catalogue: user-agents-frequent.csv line %d: %w", i+1, err)
		}
		for _, k := range robotsKeys(row[0]) {
			out[k] += n
		}
	}
	return out, nil
}

// Encode writes f as data/catalogue.json holds it: one entry a line, so
// that a refresh reads as a diff of entries.
func Encode(f *File) ([]byte, error) {
	var b bytes.Buffer
	enc := func(v any) error {
		var e bytes.Buffer
		j := json.NewEncoder(&e)
		j.SetEscapeHTML(false)
		if err := j.Encode(v); err != nil {
			return err
		}
		b.Write(bytes.TrimSuffix(e.Bytes(), []byte("\n")))
		return nil
	}
	b.WriteString("{\"sources\":")
	if err := enc(f.Sources); err != nil {
		return nil, err
	}
	b.WriteString(",\n\"entries\":[\n")
	for i := range f.Entries {
		if err := enc(&f.Entries[i]); err != nil {
			return nil, err
		}
		if i < len(f.Entries)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]")
	if len(f.Left) > 0 {
		b.WriteString(",\n\"left_out\":")
		if err := enc(f.Left); err != nil {
			return nil, err
		}
	}
	b.WriteString("}\n")
	return b.Bytes(), nil
}

// AllNames returns every name of the catalogue's entries, lower-cased,
// sorted.
func (f *File) AllNames() []string {
	var out []string
	for i := range f.Entries {
		for _, n := range f.Entries[i].Names {
			out = append(out, strings.ToLower(n))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
