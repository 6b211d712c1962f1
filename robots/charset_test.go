package robots

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// bridgeEncoding bridges every line of body as Parse reads it: the lines
// that are not UTF-8, transcoded with bridgeLine; line terminators kept.
// A body that is UTF-8 is returned as is.
func bridgeEncoding(body []byte, charset string) []byte {
	if utf8.Valid(body) {
		return body
	}
	enc := legacyEncoding(charset)
	var out []byte
	for rest := string(body); rest != ""; {
		n := strings.IndexAny(rest, "\r\n")
		if n < 0 {
			n = len(rest)
		}
		out = append(out, bridgeLine(rest[:n], enc)...)
		rest = rest[n:]
		if rest != "" { // one terminator octet; "\r\n" takes two turns
			out, rest = append(out, rest[0]), rest[1:]
		}
	}
	return out
}

func TestBridgeEncoding(t *testing.T) {
	cases := []struct {
		name, in, charset, want string
	}{
		{"utf-8 untouched", "Disallow: /caf\u00e9\n", "", "Disallow: /caf\u00e9\n"},
		{"utf-8 untouched despite a declared charset", "Disallow: /caf\u00e9\n", "iso-8859-1", "Disallow: /caf\u00e9\n"},
		{"latin-1 line", "Disallow: /unseri\xf6se\n", "", "Disallow: /unseri\u00f6se\n"},
		{"windows-1252 specials", "Disallow: /\x80\x99\n", "", "Disallow: /\u20ac\u2122\n"},
		{"only the invalid line", "Disallow: /caf\u00e9\r\nDisallow: /gro\xdfe\r\n", "", "Disallow: /caf\u00e9\r\nDisallow: /gro\u00dfe\r\n"},
		{"declared windows-1251", "Disallow: /\xef\xf0\xe8\xe2\xe5\xf2\n", "windows-1251", "Disallow: /\u043f\u0440\u0438\u0432\u0435\u0442\n"},
		{"declared gbk", "Allow:\xa1\xa1/\n", "gbk", "Allow:\u3000/\n"},
		{"declared utf-8 is no help: windows-1252", "Disallow: /\xe9\n", "utf-8", "Disallow: /\u00e9\n"},
		{"unknown label: windows-1252", "Disallow: /\xe9\n", "x-no-such", "Disallow: /\u00e9\n"},
		{"CR line ends kept", "a\xe9\rb\xe9\r", "", "a\u00e9\rb\u00e9\r"},
		{"no final newline", "Disallow: /\xe9", "", "Disallow: /\u00e9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := bridgeEncoding([]byte(c.in), c.charset)
			if string(got) != c.want {
				t.Errorf("bridgeEncoding(%q, %q) = %q, want %q", c.in, c.charset, got, c.want)
			}
			if bytes.Count(got, []byte("\n"))+bytes.Count(got, []byte("\r")) != bytes.Count([]byte(c.in), []byte("\n"))+bytes.Count([]byte(c.in), []byte("\r")) {
				t.Errorf("line terminators changed: %q -> %q", c.in, got)
			}
		})
	}
	utf := []byte("User-agent: *\nDisallow: /x\n")
	if got := bridgeEncoding(utf, ""); &got[0] != &utf[0] {
		t.Error("a UTF-8 body was copied")
	}
}

// TestBridgedRulesMatchUTF8URLs: a Latin-1 rule matches the URL a UTF-8
// site serves, and the one a Latin-1 site serves; the rule keeps its line
// number and its size.
func TestBridgedRulesMatchUTF8URLs(t *testing.T) {
	body := []byte("User-agent: *\r\nDisallow: /unseri\xf6se-Abzocke\r\nDisallow: /\xe7\xe0\xe4\r\n")
	r := Parse(body)
	cases := []struct {
		opts Options
		path string
		want bool
		line int
	}{
		{Options{}, "/unseri%C3%B6se-Abzocke", false, 2},
		{Options{}, "/unseri\u00f6se-Abzocke/x", false, 2},
		{Options{}, "/unseri%F6se-Abzocke", false, 2}, // the raw Latin-1 octets, as a Latin-1 site serves them
		{Options{Charset: "windows-1251"}, "/%D0%B7%D0%B0%D0%B4", false, 3},
		{Options{}, "/%C3%A7%C3%A0%C3%A4", false, 3}, // read as windows-1252 without a charset
	}
	for _, c := range cases {
		rr := r
		if c.opts.Charset != "" {
			rr = c.opts.Parse(body)
		}
		v := rr.Test(c.path, "ExampleBot")
		if v.Allowed != c.want {
			t.Errorf("%+v %s: allowed %v, want %v", c.opts, c.path, v.Allowed, c.want)
		}
		if !c.want && (!v.Matched() || v.Rule.Line != c.line) {
			t.Errorf("%s: deciding rule %+v, want line %d", c.path, v.Rule, c.line)
		}
	}
	if r.Size != len(body) {
		t.Errorf("Size %d, want the raw %d octets", r.Size, len(body))
	}
}

// TestRawTwinMatchesRawURLs: a rule line that is not UTF-8 matches both as
// bridged and as its raw octets, with the longest match exact across all
// rules (RFC 9309 2.2.2), and both readings show the bridged line.
func TestRawTwinMatchesRawURLs(t *testing.T) {
	latin1 := "User-agent: *\nDisallow: /gr\xf6\xdfe\nAllow: /caf\nDisallow: /caf\xe9\nAllow: /caf%E9\n" +
		"Disallow: /x # gr\xf6\xdfe\nDisallow: /\nAllow: /s\xfc\xdf*\xe9$\n"
	cases := []struct {
		name, body, charset, path string
		allowed                   bool
		line                      int
		text                      string
	}{
		{"raw Latin-1 URL", latin1, "", "/gr%F6%DFe", false, 2, "Disallow: /gr\u00f6\u00dfe"},
		{"raw Latin-1 URL, lower-case escapes", latin1, "", "/gr%f6%dfe/x", false, 2, "Disallow: /gr\u00f6\u00dfe"},
		{"UTF-8 URL", latin1, "", "/gr%C3%B6%C3%9Fe", false, 2, "Disallow: /gr\u00f6\u00dfe"},
		{"UTF-8 URL unencoded", latin1, "", "/gr\u00f6\u00dfe", false, 2, "Disallow: /gr\u00f6\u00dfe"},
		{"neither spelling", latin1, "", "/gr%F6ssee", false, 7, "Disallow: /"},
		{"raw reading beats a shorter allow", latin1, "", "/caf%E9-x", true, 5, "Allow: /caf%E9"},
		{"bridged reading beats a longer ASCII allow", latin1, "", "/caf%C3%A9", false, 4, "Disallow: /caf\u00e9"},
		{"comment only: one rule", latin1, "", "/x%F6", false, 6, "Disallow: /x"},
		{"wildcard twin, raw", latin1, "", "/s%FC%DF/a/%E9", true, 8, "Allow: /s\u00fc\u00df*\u00e9$"},
		{"wildcard twin, bridged", latin1, "", "/s%C3%BC%C3%9F/a/%C3%A9", true, 8, "Allow: /s\u00fc\u00df*\u00e9$"},
		{"wildcard twin, mixed spellings match neither", latin1, "", "/s%FC%DF/a/%C3%A9", false, 7, "Disallow: /"},
		{"declared windows-1251, raw", "User-agent: *\nDisallow: /\xef\xf0\xe8\n", "windows-1251", "/%EF%F0%E8", false, 2, "Disallow: /\u043f\u0440\u0438"},
		{"declared windows-1251, bridged", "User-agent: *\nDisallow: /\xef\xf0\xe8\n", "windows-1251", "/%D0%BF%D1%80%D0%B8", false, 2, "Disallow: /\u043f\u0440\u0438"},
		{"mixed line: raw keeps its UTF-8 octets", "User-agent: *\nDisallow: /caf\xc3\xa9/\xe9\n", "", "/caf%C3%A9/%E9", false, 2, "Disallow: /caf\u00c3\u00a9/\u00e9"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Options{Charset: c.charset}.Parse([]byte(c.body)).Test(c.path, "ExampleBot")
			if v.Allowed != c.allowed || v.Rule.Line != c.line || v.Rule.Text() != c.text {
				t.Errorf("Test(%q): got allowed=%v line=%d %q, want allowed=%v line=%d %q",
					c.path, v.Allowed, v.Rule.Line, v.Rule.Text(), c.allowed, c.line, c.text)
			}
		})
	}
}

// TestRawTwinGroups: Groups lists a twin after its bridged rule, on the same
// line, in linear and bucketed programs; the rule limit counts lines.
func TestRawTwinGroups(t *testing.T) {
	want := []Rule{
		{Pattern: "/a", Line: 2},
		{Pattern: "/gr%C3%B6%C3%9Fe", Line: 3, edits: "\x06\x00\x00\x00"},
		{Pattern: "/gr%F6%DFe", Line: 3, edits: twinMark + "/gr\u00f6\u00dfe"},
		{Allow: true, Pattern: "/b", Line: 4},
	}
	body := "User-agent: *\nDisallow: /a\nDisallow: /gr\xf6\xdfe\nAllow: /b\n"
	if got := Parse([]byte(body)).Group(0).Rules; !reflect.DeepEqual(got, want) {
		t.Errorf("linear: got %+v, want %+v", got, want)
	}
	// Bucketed: the twin is in the bucket of "/%" ahead of its bridged rule's "/g".
	body = "User-agent: *\nDisallow: /z\nDisallow: /\xe9x\nDisallow: /y\nDisallow: /w\nDisallow: /v\nDisallow: /u\n"
	r := Parse([]byte(body))
	if r.a[0]&1 == 0 {
		t.Fatal("the group's program is not bucketed")
	}
	var lines []int
	var texts []string
	for _, rule := range r.Group(0).Rules {
		lines, texts = append(lines, rule.Line), append(texts, rule.Pattern+" "+rule.Text())
	}
	if !reflect.DeepEqual(lines, []int{2, 3, 3, 4, 5, 6, 7}) || texts[1] != "/%C3%A9x Disallow: /\u00e9x" || texts[2] != "/%E9x Disallow: /\u00e9x" {
		t.Errorf("bucketed: got lines %v, rules %q", lines, texts)
	}
	r = Options{MaxRulesPerGroup: 2}.Parse([]byte("User-agent: *\nDisallow: /\xe9\nDisallow: /b\nDisallow: /c\n"))
	if n := len(r.Group(0).Rules); n != 3 || r.Limited != 1 {
		t.Errorf("MaxRulesPerGroup 2: got %d rules, Limited %d, want 3 rules (one line twice), Limited 1", n, r.Limited)
	}
}

// TestRawTwinNoAlloc: Test does not allocate when a twin decides.
func TestRawTwinNoAlloc(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /a\nDisallow: /gr\xf6\xdfe\nAllow: /b\n"))
	if v := r.Test("/gr%F6%DFe", "x"); v.Rule.Line != 3 {
		t.Fatalf("got line %d, want 3", v.Rule.Line)
	}
	if allocs := testing.AllocsPerRun(100, func() { _ = r.Test("/gr%F6%DFe", "x") }); allocs != 0 {
		t.Errorf("Test allocated %.1f times per run, want 0", allocs)
	}
}
