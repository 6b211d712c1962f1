package ipranges

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "ipranges", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// jafarExample is the basic publication of the JAFAR draft's examples
// (draft-illyes-webbotauth-jafar-00, as draft-illyes-aipref-jafar-00 has
// it), with a synctoken and notes.
const jafarExample = `{
  "formatVersion": "1.0",
  "synctoken": "1755268200",
  "creationTime": "2025-08-15T14:30:00Z",
  "notes": "IP ranges for ExampleCloud services. For verification, FCrDNS is also recommended.",
  "prefixes": [
    {"ipv4Prefix": "66.249.64.0/20"},
    {"ipv4Prefix": "34.64.0.0/12", "service": "AdsBot-Google"},
    {"ipv6Prefix": "2001:4860:4000::/36", "services": ["Googlebot", "GoogleOther"]},
    {"ipv4Prefix": "192.0.2.0/24", "ipv6Prefix": "2001:db8::/32"},
    {"service": "nothing"},
    {"ipv4Prefix": "198.51.100.0/24", "someFutureMember": {"x": 1}}
  ]
}`

func TestParse(t *testing.T) {
	tests := []struct {
		name      string
		body      []byte
		format    string
		created   string // RFC 3339, "" for none
		prefixes  int
		ignored   int
		first     string
		sync      string
		services1 []string // of the second prefix
	}{
		{"google fixture", fixture(t, "googlebot-fixture.json"), FormatGoogle, "2023-09-26T22:00:50Z", 7, 0, "2001:4860:4801:10::/64", "", nil},
		{"bing fixture", fixture(t, "bingbot-fixture.json"), FormatGoogle, "2023-03-08T10:00:00.121331Z", 5, 0, "157.55.39.0/24", "", nil},
		{"common crawl (synctoken, notes)", fixture(t, "ccbot-fixture.json"), FormatJAFAR, "2026-08-11T13:40:00Z", 5, 0, "2600:1f28:365:8000::/56", "20260811134000", nil},
		{"perplexity fixture", fixture(t, "perplexitybot-fixture.json"), FormatGoogle, "2025-02-07T16:56:00Z", 4, 0, "107.20.236.150/32", "", nil},
		{"apple fixture", fixture(t, "applebot-fixture.json"), FormatGoogle, "2023-10-27T10:00:00Z", 4, 0, "17.241.208.160/27", "", nil},
		{"jafar", []byte(jafarExample), FormatJAFAR, "2025-08-15T14:30:00Z", 4, 2, "66.249.64.0/20", "1755268200", []string{"AdsBot-Google"}},
		{"plain text", []byte("# GPTBot\n20.171.206.0/24\r\n  52.230.152.0/24 # more\n\n2a01:111:f403:c111::/64\n40.84.180.64\n"), FormatPlain, "", 4, 0, "20.171.206.0/24", "", nil},
		{"json array", []byte(`["20.171.206.0/24", "40.84.180.64"]`), FormatPlain, "", 2, 0, "20.171.206.0/24", "", nil},
		{"unmasked prefix, BOM", []byte("\xef\xbb\xbf{\"prefixes\":[{\"ipv4Prefix\":\"66.249.64.5/27\"}]}"), FormatGoogle, "", 1, 0, "66.249.64.0/27", "", nil},
	}
	for _, tt := range tests {
		f, err := Parse(tt.body)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		var created string
		if !f.CreationTime.IsZero() {
			created = f.CreationTime.Format(time.RFC3339Nano)
		}
		if f.Format != tt.format || created != tt.created || len(f.Prefixes) != tt.prefixes || f.Ignored != tt.ignored ||
			f.Prefixes[0].Prefix.String() != tt.first || f.SyncToken != tt.sync {
			t.Errorf("%s: format %s created %s prefixes %d ignored %d first %s sync %q", tt.name, f.Format, created, len(f.Prefixes), f.Ignored,
				f.Prefixes[0].Prefix, f.SyncToken)
		}
		if tt.services1 != nil && strings.Join(f.Prefixes[1].Services, ",") != strings.Join(tt.services1, ",") {
			t.Errorf("%s: services %q", tt.name, f.Prefixes[1].Services)
		}
	}
	f, _ := Parse([]byte(jafarExample))
	if got := f.Prefixes[2].Services; len(got) != 2 || got[1] != "GoogleOther" || !strings.Contains(f.Notes, "FCrDNS") || f.FormatVersion != "1.0" {
		t.Errorf("jafar: %+v", f)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"no prefixes", `{"creationTime":"2025-01-01T00:00:00Z","prefixes":[]}`, "no prefix"},
		{"no prefixes member", `{"creationTime":"2025-01-01T00:00:00Z"}`, `want "prefixes"`},
		{"only ignored objects", `{"prefixes":[{"ipv4Prefix":"1.2.3.0/24","ipv6Prefix":"::/0"}]}`, "no prefix"},
		{"bad prefix", `{"prefixes":[{"ipv4Prefix":"66.249.64.0/33"}]}`, `prefixes[0]: ipv4Prefix "66.249.64.0/33": not a CIDR prefix`},
		{"wrong family", `{"prefixes":[{"ipv4Prefix":"2001:db8::/32"}]}`, "the other family"},
		{"not a string", `{"prefixes":[{"ipv4Prefix":["1.2.3.0/24"]}]}`, `"ipv4Prefix": want a string`},
		{"future major version", `{"formatVersion":"2.0","prefixes":[{"ipv4Prefix":"1.2.3.0/24"}]}`, "knows major version 1"},
		{"bad version", `{"formatVersion":"one","prefixes":[{"ipv4Prefix":"1.2.3.0/24"}]}`, "want MAJOR.MINOR"},
		{"bad time", `{"creationTime":"yesterday","prefixes":[{"ipv4Prefix":"1.2.3.0/24"}]}`, `creationTime "yesterday"`},
		{"bad services", `{"prefixes":[{"ipv4Prefix":"1.2.3.0/24","services":"x"}]}`, "array of strings"},
		{"JSON error", `{"prefixes":[`, "JSON"},
		{"html", "<!DOCTYPE html>\n<html><body>Moved</body></html>", "HTML"},
		{"plain junk", "20.171.206.0/24\nnot an address\n", `line 2: "not an address": neither an address nor a CIDR prefix`},
		{"gzip", "\x1f\x8b\x08\x00junk", "gzip-compressed data"},
		{"empty", "", "no prefix"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.body))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestSet(t *testing.T) {
	f, err := Parse(fixture(t, "googlebot-fixture.json"))
	if err != nil {
		t.Fatal(err)
	}
	s := NewSet(append(f.Addrs(), netip.MustParsePrefix("::ffff:192.0.2.0/120"), netip.MustParsePrefix("66.249.79.0/27")))
	tests := []struct {
		addr       string
		in, near   bool
		whyWritten string
	}{
		{"66.249.79.230", true, false, "in 66.249.79.224/27"},
		{"66.249.79.255", true, false, "last address"},
		{"66.249.79.31", true, false, "in 66.249.79.0/27 merged with .32/27"},
		{"66.249.79.128", false, true, "a hole between prefixes"},
		{"66.249.73.135", false, true, "real Googlebot of 2015, outside the trimmed fixture"},
		{"66.250.0.1", false, false, "another /16"},
		{"::ffff:66.249.79.230", true, false, "IPv4-mapped"},
		{"192.0.2.7", true, false, "a mapped prefix, read as IPv4"},
		{"2001:4860:4801:11::1", true, false, "IPv6"},
		{"2001:4860:4801:13::1", false, true, "IPv6 hole"},
		{"2001:4861::1", false, false, "another /32"},
		{"0.0.0.0", false, false, "before every span"},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		if s.Contains(a) != tt.in || s.Near(a) != tt.near {
			t.Errorf("%s (%s): contains %v near %v", tt.addr, tt.whyWritten, s.Contains(a), s.Near(a))
		}
	}
	if s.Len() != 9 {
		t.Errorf("len %d", s.Len())
	}
	all := NewSet([]netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("255.255.255.255/32")})
	if !all.Contains(netip.MustParseAddr("255.255.255.255")) || all.Contains(netip.MustParseAddr("::1")) {
		t.Error("0.0.0.0/0")
	}
}
