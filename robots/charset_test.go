package robots

import (
	"bytes"
	"testing"
)

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
// site serves, and the rule keeps its line number and its size.
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
		{Options{}, "/unseri%F6se-Abzocke", true, 0}, // the raw Latin-1 octet is not what UTF-8 sites serve
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
