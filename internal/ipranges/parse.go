package ipranges

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/robots"
)

// The formats Parse reads (File.Format).
const (
	// FormatGoogle is Google's {"creationTime", "prefixes"} object.
	FormatGoogle = "google"
	// FormatJAFAR is draft-illyes-webbotauth-jafar-00's object: Google's
	// with "formatVersion", "synctoken", "notes" or a prefix's service.
	FormatJAFAR = "jafar"
	// FormatPlain is a text list: an address or CIDR prefix a line.
	FormatPlain = "plain"
)

// JAFARMajor is the major formatVersion this reader knows: a file of a
// greater major version is refused (draft-illyes-webbotauth-jafar-00,
// "Handling Format Versioning": a consumer MUST NOT parse it).
const JAFARMajor = 1

// Prefix is one published address range.
type Prefix struct {
	Prefix netip.Prefix
	// Services are the services a JAFAR publisher tags the prefix with
	// ("service" or "services": "Bingbot", "AdsBot-Google"); nil when
	// untagged, that is for every product token the file covers.
	Services []string
}

// File is a published ranges file as read.
type File struct {
	// Format is FormatGoogle, FormatJAFAR or FormatPlain.
	Format string
	// CreationTime is when the publisher says it generated the file
	// ("creationTime", read as UTC when it has no zone, as Google, OpenAI
	// and Apple write it); zero when the file states none.
	CreationTime time.Time
	// FormatVersion, SyncToken and Notes are JAFAR's members, "" when
	// absent.
	FormatVersion, SyncToken, Notes string
	// Prefixes are the ranges, masked, in the file's order.
	Prefixes []Prefix
	// Ignored counts the prefix objects passed over because they hold
	// both ipv4Prefix and ipv6Prefix or neither (JAFAR: consumers MUST
	// ignore them).
	Ignored int
}

// Addrs returns the file's prefixes.
func (f *File) Addrs() []netip.Prefix {
	out := make([]netip.Prefix, len(f.Prefixes))
	for i, p := range f.Prefixes {
		out[i] = p.Prefix
	}
	return out
}

// Parse reads a published ranges file in any of the formats: a JSON
// object (Google's or JAFAR), a JSON array of prefix strings, or plain
// text. An error says what is wrong and where: not text, an HTML page, a
// JSON error, a formatVersion of an unknown major version, a creationTime
// that is not ISO 8601, a prefix that is not CIDR (or of the wrong
// family for its key), a text line that is neither address nor prefix,
// or no prefix at all.
func Parse(b []byte) (*File, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if why := robots.NotText(b); why != "" {
		return nil, fmt.Errorf("not a ranges file: %s", why)
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	var f *File
	var err error
	switch {
	case len(t) > 0 && t[0] == '<':
		return nil, errors.New("an HTML or XML page, not a ranges file (has the file moved?)")
	case len(t) > 0 && t[0] == '{':
		f, err = parseObject(t)
	case len(t) > 0 && t[0] == '[':
		f, err = parseArray(t)
	default:
		f, err = parsePlain(t)
	}
	if err != nil {
		return nil, err
	}
	if len(f.Prefixes) == 0 {
		return nil, errors.New("no prefix: a ranges file with none verifies no request")
	}
	return f, nil
}

// parseObject reads Google's object or JAFAR's.
func parseObject(b []byte) (*File, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	f := &File{Format: FormatGoogle}
	var err error
	if raw, ok := doc["formatVersion"]; ok {
		f.Format = FormatJAFAR
		if f.FormatVersion, err = text(raw, "formatVersion"); err != nil {
			return nil, err
		}
		if err := checkVersion(f.FormatVersion); err != nil {
			return nil, err
		}
	}
	if raw, ok := doc["synctoken"]; ok {
		f.Format = FormatJAFAR
		if f.SyncToken, err = text(raw, "synctoken"); err != nil {
			return nil, err
		}
	}
	if raw, ok := doc["notes"]; ok {
		f.Format = FormatJAFAR
		if f.Notes, err = text(raw, "notes"); err != nil {
			return nil, err
		}
	}
	if raw, ok := doc["creationTime"]; ok {
		s, err := text(raw, "creationTime")
		if err != nil {
			return nil, err
		}
		if f.CreationTime, err = ParseTime(s); err != nil {
			return nil, err
		}
	}
	var prefixes []map[string]json.RawMessage
	if err := json.Unmarshal(doc["prefixes"], &prefixes); err != nil || doc["prefixes"] == nil {
		return nil, errors.New(`want "prefixes", an array of objects with an ipv4Prefix or ipv6Prefix`)
	}
	for i, p := range prefixes {
		v4, has4 := p["ipv4Prefix"]
		v6, has6 := p["ipv6Prefix"]
		if has4 == has6 {
			f.Ignored++ // both or neither: JAFAR has consumers ignore it
			continue
		}
		raw, want := v4, "ipv4Prefix"
		if has6 {
			raw, want = v6, "ipv6Prefix"
		}
		pfx, err := jsonPrefix(raw, want)
		if err != nil {
			return nil, fmt.Errorf("prefixes[%d]: %w", i, err)
		}
		services, err := services(p)
		if err != nil {
			return nil, fmt.Errorf("prefixes[%d]: %w", i, err)
		}
		if services != nil {
			f.Format = FormatJAFAR
		}
		f.Prefixes = append(f.Prefixes, Prefix{Prefix: pfx, Services: services})
	}
	return f, nil
}

// checkVersion refuses a formatVersion of another major version than
// JAFARMajor; minor versions only add members, which are ignored.
func checkVersion(v string) error {
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	switch {
	case err != nil || n < 0:
		return fmt.Errorf("formatVersion %q: want MAJOR.MINOR", v)
	case n > JAFARMajor:
		return fmt.Errorf("formatVersion %q: this reader knows major version %d (draft-illyes-webbotauth-jafar-00); a newer major version is not parsed", v, JAFARMajor)
	}
	return nil
}

// jsonPrefix reads a prefix string under key want, which names its
// family.
func jsonPrefix(raw json.RawMessage, want string) (netip.Prefix, error) {
	s, err := text(raw, want)
	if err != nil {
		return netip.Prefix{}, err
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%s %q: not a CIDR prefix", want, s)
	}
	if p.Addr().Is4() != (want == "ipv4Prefix") {
		return netip.Prefix{}, fmt.Errorf("%s %q: an address of the other family", want, s)
	}
	return p.Masked(), nil
}

// services reads a prefix object's "service" (a string, in the earlier
// JAFAR drafts) or "services" (an array of strings).
func services(p map[string]json.RawMessage) ([]string, error) {
	var out []string
	if raw, ok := p["service"]; ok {
		s, err := text(raw, "service")
		if err != nil {
			return nil, err
		}
		if s != "" {
			out = append(out, s)
		}
	}
	if raw, ok := p["services"]; ok {
		var ss []string
		if err := json.Unmarshal(raw, &ss); err != nil {
			return nil, errors.New(`"services": want an array of strings`)
		}
		out = append(out, ss...)
	}
	return out, nil
}

// text reads a JSON string (or a number, as text) named name.
func text(raw json.RawMessage, name string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err == nil {
		return n.String(), nil
	}
	return "", fmt.Errorf("%q: want a string", name)
}

// parseArray reads a JSON array of prefix (or address) strings.
func parseArray(b []byte) (*File, error) {
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return nil, fmt.Errorf("JSON: want an array of prefix strings: %w", err)
	}
	f := &File{Format: FormatPlain}
	for i, s := range ss {
		p, err := plainPrefix(s)
		if err != nil {
			return nil, fmt.Errorf("[%d]: %w", i, err)
		}
		f.Prefixes = append(f.Prefixes, Prefix{Prefix: p})
	}
	return f, nil
}

// parsePlain reads a text list: an address or CIDR prefix a line; "#"
// starts a comment; blank lines are passed over.
func parsePlain(b []byte) (*File, error) {
	f := &File{Format: FormatPlain}
	for n, line := range strings.Split(string(b), "\n") {
		s, _, _ := strings.Cut(line, "#")
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := plainPrefix(s)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		f.Prefixes = append(f.Prefixes, Prefix{Prefix: p})
	}
	return f, nil
}

// plainPrefix reads a CIDR prefix, or an address as a prefix of its
// whole length.
func plainPrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q: not a CIDR prefix", clip(s))
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return netip.Prefix{}, fmt.Errorf("%q: neither an address nor a CIDR prefix", clip(s))
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// ParseTime reads a creationTime: ISO 8601 as RFC 3339 ("2026-08-11T13:40:00Z",
// an offset allowed), or without a zone and read as UTC
// ("2023-09-26T22:00:50.000000", as Google, OpenAI and Apple write it), or
// a date.
func ParseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999", time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("creationTime %q: want ISO 8601 (2026-08-11T13:40:00Z)", clip(s))
}
