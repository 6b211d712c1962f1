package ipranges

import (
	"fmt"
	"slices"
	"strings"
)

// Source is a ranges file an operator publishes, and the product tokens
// whose requests it verifies.
type Source struct {
	// Name names the stored copy in the data directory and the source on
	// the command line: lower case, digits and "-".
	Name string
	// Operator runs the crawlers.
	Operator string
	// URL is where the operator publishes the file.
	URL string
	// Tokens are the product tokens its prefixes verify, as the
	// operator's documentation names its crawlers.
	Tokens []string
}

// Google's crawlers and fetchers by the file that publishes their
// addresses (developers.google.com/crawling/docs/crawlers-fetchers: the
// common crawlers, the special-case crawlers, the user-triggered
// fetchers). Googlebot-Mobile is the token of Googlebot's feature-phone
// User-Agents, still found in logs.
var (
	googleCommon = []string{"Googlebot", "Googlebot-Image", "Googlebot-News", "Googlebot-Video", "Googlebot-Mobile",
		"Storebot-Google", "Google-InspectionTool", "GoogleOther", "GoogleOther-Image", "GoogleOther-Video", "Google-CloudVertexBot"}
	googleSpecial = []string{"APIs-Google", "AdsBot-Google", "AdsBot-Google-Mobile", "Mediapartners-Google", "Google-Safety",
		"Google-CloudVertexBot"}
	googleFetchers = []string{"FeedFetcher-Google", "GoogleProducer", "Google-Read-Aloud", "Google-Site-Verification",
		"Google-Pinpoint", "Google-NotebookLM"}
)

// sources are the published ranges files robotsproxy knows, at the
// addresses their operators document (Google's under /crawling/ipranges/,
// where they moved in March 2026).
var sources = []Source{
	{"google-common-crawlers", "Google", "https://developers.google.com/static/crawling/ipranges/common-crawlers.json", googleCommon},
	{"google-special-crawlers", "Google", "https://developers.google.com/static/crawling/ipranges/special-crawlers.json", googleSpecial},
	{"google-user-triggered-fetchers", "Google", "https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers.json", googleFetchers},
	{"google-user-triggered-fetchers-google", "Google", "https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers-google.json", googleFetchers},
	{"bing", "Microsoft", "https://www.bing.com/toolbox/bingbot.json", []string{"bingbot", "adidxbot", "BingPreview", "MicrosoftPreview"}},
	{"openai-gptbot", "OpenAI", "https://openai.com/gptbot.json", []string{"GPTBot"}},
	{"openai-searchbot", "OpenAI", "https://openai.com/searchbot.json", []string{"OAI-SearchBot"}},
	{"openai-chatgpt-user", "OpenAI", "https://openai.com/chatgpt-user.json", []string{"ChatGPT-User"}},
	{"openai-adsbot", "OpenAI", "https://openai.com/adsbot.json", []string{"OAI-AdsBot"}},
	{"perplexity-perplexitybot", "Perplexity", "https://www.perplexity.ai/perplexitybot.json", []string{"PerplexityBot"}},
	{"perplexity-user", "Perplexity", "https://www.perplexity.ai/perplexity-user.json", []string{"Perplexity-User"}},
	{"apple-applebot", "Apple", "https://search.developer.apple.com/applebot.json", []string{"Applebot"}},
	{"commoncrawl-ccbot", "Common Crawl", "https://index.commoncrawl.org/ccbot.json", []string{"CCBot"}},
	{"anthropic", "Anthropic", "https://claude.com/crawling/bots.json", []string{"ClaudeBot", "Claude-User", "Claude-SearchBot"}},
	{"duckduckgo-duckduckbot", "DuckDuckGo", "https://duckduckgo.com/duckduckbot.json", []string{"DuckDuckBot"}},
}

// Sources returns the published ranges files robotsproxy knows, in a
// fixed order (a copy: callers may change it).
func Sources() []Source {
	out := slices.Clone(sources)
	for i := range out {
		out[i].Tokens = slices.Clone(out[i].Tokens)
	}
	return out
}

// Tokens returns the product tokens of srcs, each once, in their order.
func Tokens(srcs []Source) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range srcs {
		for _, t := range s.Tokens {
			if k := strings.ToLower(t); !seen[k] {
				seen[k] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// Select returns the sources of srcs named in names (all of them when
// names is empty), with the URLs in urls (NAME to URL) in place of the
// published ones: a mirror, or a local copy's server. An unknown name in
// either is an error that lists the known ones.
func Select(srcs []Source, names []string, urls map[string]string) ([]Source, error) {
	byName := map[string]int{}
	var known []string
	for i, s := range srcs {
		byName[s.Name] = i
		known = append(known, s.Name)
	}
	for name, u := range urls {
		i, ok := byName[name]
		if !ok {
			return nil, fmt.Errorf("source %q: unknown; the sources are %s", name, strings.Join(known, ", "))
		}
		srcs[i].URL = u
	}
	if len(names) == 0 {
		return srcs, nil
	}
	var out []Source
	for _, n := range names {
		i, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("source %q: unknown; the sources are %s", n, strings.Join(known, ", "))
		}
		out = append(out, srcs[i])
	}
	return out, nil
}
