// Package loggen writes realistic synthetic audit logs for benchmarks and
// tests of the audit tools: many crawlers (some in report mode), hosts
// with a Zipf-like popularity, robots.txt versions, unreachable spells,
// CONNECT lines, and the "prev" hash chain. It is deterministic: the same
// Config gives the same octets.
package loggen

import (
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// Config shapes a log. Zero fields take the defaults given.
type Config struct {
	Lines int       // lines to write; default 1,000,000
	Hosts int       // distinct hosts; default 10,000
	Start time.Time // time of the first line; default 2026-11-01T00:00:00Z
	// Step is the mean time between lines; default 250ms (one million
	// lines span about three days).
	Step time.Duration
	Seed uint64 // default 1
	// Chain adds "prev", the hex SHA-256 of the previous line including
	// its newline (64 zeros for the first), added by audit.AppendPrev.
	Chain bool
}

func (c Config) withDefaults() Config {
	if c.Lines <= 0 {
		c.Lines = 1_000_000
	}
	if c.Hosts <= 0 {
		c.Hosts = 10_000
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	}
	if c.Step <= 0 {
		c.Step = 250 * time.Millisecond
	}
	if c.Seed == 0 {
		c.Seed = 1
	}
	return c
}

// crawler is a product token, how it is identified, its share of the
// traffic, and whether its denials are only reported (enforced false).
type crawler struct {
	token, source, ua string
	weight            int
	reportOnly        bool
}

func crawlers() []crawler {
	return []crawler{
		{"googlebot", "user-agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", 30, false},
		{"bingbot", "user-agent", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", 15, false},
		{"gptbot", "credentials", "Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; GPTBot/1.2)", 12, true},
		{"claudebot", "client-range", "Mozilla/5.0 (compatible; ClaudeBot/1.0; +claudebot@anthropic.com)", 10, false},
		{"ccbot", "user-agent", "CCBot/2.0 (https://commoncrawl.org/faq/)", 8, true},
		{"bytespider", "user-agent", "Mozilla/5.0 (Linux; Android 5.0) AppleWebKit/537.36 (KHTML, like Gecko) Mobile Safari/537.36 (compatible; Bytespider)", 6, false},
		{"perplexitybot", "override", "Mozilla/5.0 (compatible; PerplexityBot/1.0)", 5, true},
		{"applebot", "user-agent", "Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 (KHTML, like Gecko) Applebot/0.1", 4, false},
		{"yandexbot", "user-agent", "Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", 3, false},
		{"ahrefsbot", "user-agent", "Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)", 3, false},
		{"semrushbot", "user-agent", "Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)", 2, false},
		{"amazonbot", "default", "Mozilla/5.0 (compatible; Amazonbot/0.1)", 2, false},
	}
}

var paths = []string{"/", "/index.html", "/private/data", "/search?q=robots", "/admin/login", "/blog/2026/11/post", "/api/v1/items", "/tmp/cache", "/images/logo.png", "/cart/checkout"}

var rules = []struct {
	text  string
	line  int
	allow bool
}{
	{"Disallow: /private", 3, false}, {"Disallow: /admin", 4, false}, {"Disallow: /search", 5, false},
	{"Allow: /", 6, true}, {"Disallow: /api/", 7, false}, {"Disallow: /tmp", 8, false},
	{"Allow: /blog/", 9, true}, {"Disallow: /cart", 10, false},
}

// Write writes c.Lines audit lines to w.
func Write(w io.Writer, c Config) error {
	g := newGen(c.withDefaults())
	bw := bufio.NewWriterSize(w, 1<<16)
	for range g.c.Lines {
		if _, err := bw.Write(g.next()); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteRotated writes the log into dir as lumberjack names it when
// rotating: files-1 backups "audit-<time>.log" (the oldest gzipped, as
// "audit-<time>.log.gz") and the current "audit.log". It returns the
// paths, oldest first.
func WriteRotated(dir string, c Config, files int) ([]string, error) {
	c = c.withDefaults()
	if files < 1 {
		files = 1
	}
	g := newGen(c)
	var out []string
	for f := range files {
		n := c.Lines / files
		if f == files-1 {
			n = c.Lines - n*(files-1)
		}
		name := "audit.log"
		if f < files-1 {
			end := c.Start.Add(time.Duration((f+1)*(c.Lines/files)) * c.Step)
			name = "audit-" + end.Format("2006-01-02T15-04-05.000") + ".log"
			if f == 0 {
				name += ".gz"
			}
		}
		path := filepath.Join(dir, name)
		if err := writeFile(path, g, n, f == 0 && files > 1); err != nil {
			return nil, err
		}
		out = append(out, path)
	}
	return out, nil
}

func writeFile(path string, g *gen, n int, gz bool) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	var w io.Writer = f
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(f)
		w = zw
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	for range n {
		if _, err = bw.Write(g.next()); err != nil {
			break
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if zw != nil && err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("loggen %s: %w", path, err)
	}
	return nil
}

// gen produces one line at a time into a reused buffer.
type gen struct {
	c        Config
	rng      *rand.Rand
	zipf     *rand.Zipf
	crawlers []crawler
	total    int
	t        time.Time
	buf      []byte
	chained  []byte // buf with "prev" (Config.Chain)
	prev     [sha256.Size]byte
	down     []int64 // per host: Unix second until which it is unreachable
}

func newGen(c Config) *gen {
	rng := rand.New(rand.NewPCG(c.Seed, c.Seed^0x9e3779b97f4a7c15))
	g := &gen{c: c, rng: rng, zipf: rand.NewZipf(rng, 1.1, 4, uint64(c.Hosts-1)), crawlers: crawlers(), t: c.Start, down: make([]int64, c.Hosts)}
	for _, cr := range g.crawlers {
		g.total += cr.weight
	}
	return g
}

func (g *gen) pick() crawler {
	n := g.rng.IntN(g.total)
	for _, cr := range g.crawlers {
		if n < cr.weight {
			return cr
		}
		n -= cr.weight
	}
	return g.crawlers[0]
}
