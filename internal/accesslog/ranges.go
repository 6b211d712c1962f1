package accesslog

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strings"

	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/policy"
)

// ParseRanges reads a crawler operator's published IP ranges in the JSON
// shape Google (googlebot.json), Bing (bingbot.json), OpenAI (gptbot.json)
// and others publish:
//
//	{"creationTime": "...", "prefixes": [{"ipv4Prefix": "66.249.64.0/27"}, {"ipv6Prefix": "2001:4860:4801:10::/64"}]}
//
// An entry may carry both keys. An error names the first prefix that is
// not a CIDR prefix; a file with no prefix is an error too.
func ParseRanges(b []byte) ([]netip.Prefix, error) {
	var doc struct {
		Prefixes []struct {
			IPv4 string `json:"ipv4Prefix"`
			IPv6 string `json:"ipv6Prefix"`
		} `json:"prefixes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("published ranges: %w", err)
	}
	var out []netip.Prefix
	for _, p := range doc.Prefixes {
		for _, s := range []string{p.IPv4, p.IPv6} {
			if s == "" {
				continue
			}
			pfx, err := netip.ParsePrefix(strings.TrimSpace(s))
			if err != nil {
				return nil, fmt.Errorf("published ranges: %w", err)
			}
			out = append(out, pfx.Masked())
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("published ranges: no ipv4Prefix or ipv6Prefix in \"prefixes\"")
	}
	return out, nil
}

// inRanges reports whether addr lies in one of the prefixes; an
// IPv4-mapped IPv6 address is read as its IPv4 address.
func inRanges(ranges []netip.Prefix, addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range ranges {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// parseClient reads a logged client address: an IP address, possibly in
// brackets or with a zone. A host name gives ok false.
func parseClient(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]")
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

// rangesDoc is a published ranges file as access.FetchDocument keeps it.
type rangesDoc []netip.Prefix

func (d rangesDoc) Retained() int { return len(d) * 32 }

// MaxRangesBody bounds a published ranges file fetched from a URL, in
// octets (Google's googlebot.json is about 20 KiB).
const MaxRangesBody = 4 << 20

// FetchRanges fetches a published ranges file from url with the proxy's
// fetcher (its destination guard, timeouts and redirect limit) and
// parses it (ParseRanges). An error says why: a status that is not 2xx,
// a network error, a body over MaxRangesBody octets, or one that does not
// parse.
func FetchRanges(ctx context.Context, f *access.Fetcher, url string) ([]netip.Prefix, error) {
	a := f.FetchDocument(ctx, url, access.DocumentOptions{What: "published ranges", Accept: "application/json", MaxBytes: MaxRangesBody,
		Parse: func(body []byte, _ http.Header) (policy.Document, error) {
			p, err := ParseRanges(body)
			return rangesDoc(p), err
		}})
	if a.Result != policy.Successful {
		if a.Err != nil {
			return nil, fmt.Errorf("fetch %s: %s (status %d): %w", url, a.Result, a.Status, a.Err)
		}
		return nil, fmt.Errorf("fetch %s: %s (status %d)", url, a.Result, a.Status)
	}
	return a.Doc.(rangesDoc), nil
}
