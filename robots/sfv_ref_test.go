package robots_test

import (
	"encoding/base64"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/robotsproxy/robotsproxy/robots"
)

// sfRefDict is a reference RFC 9651 Dictionary parser for FuzzStatement,
// written as a plain transcription of the algorithms of RFC 9651 section
// 4.2 that builds the values: independent of the package's scanner, which
// validates without building anything. It returns, for each key, the last
// member's value as a Token ("" for any other type), and whether s parsed.
func sfRefDict(s string) (map[string]string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] > 0x7F {
			return nil, false
		}
	}
	in := strings.TrimLeft(s, " ")
	dict := map[string]string{}
	for in != "" {
		key, ok := sfRefKey(&in)
		if !ok {
			return nil, false
		}
		val := ""
		if strings.HasPrefix(in, "=") {
			in = in[1:]
			if strings.HasPrefix(in, "(") {
				ok = sfRefInnerList(&in)
			} else {
				var tok string
				var isTok bool
				tok, isTok, ok = sfRefBare(&in)
				if isTok {
					val = tok
				}
				ok = ok && sfRefParams(&in)
			}
		} else {
			ok = sfRefParams(&in)
		}
		if !ok {
			return nil, false
		}
		dict[key] = val
		in = strings.TrimLeft(in, " \t")
		if in == "" {
			return dict, true
		}
		if in[0] != ',' {
			return nil, false
		}
		in = strings.TrimLeft(in[1:], " \t")
		if in == "" {
			return nil, false
		}
	}
	return dict, true
}

func sfRefKey(in *string) (string, bool) {
	s := *in
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] == '*') {
		return "", false
	}
	n := strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune("abcdefghijklmnopqrstuvwxyz0123456789_-.*", r) })
	if n < 0 {
		n = len(s)
	}
	*in = s[n:]
	return s[:n], true
}

func sfRefParams(in *string) bool {
	for strings.HasPrefix(*in, ";") {
		*in = strings.TrimLeft((*in)[1:], " ")
		if _, ok := sfRefKey(in); !ok {
			return false
		}
		if strings.HasPrefix(*in, "=") {
			*in = (*in)[1:]
			if _, _, ok := sfRefBare(in); !ok {
				return false
			}
		}
	}
	return true
}

func sfRefInnerList(in *string) bool {
	*in = (*in)[1:]
	for *in != "" {
		*in = strings.TrimLeft(*in, " ")
		if strings.HasPrefix(*in, ")") {
			*in = (*in)[1:]
			return sfRefParams(in)
		}
		if _, _, ok := sfRefBare(in); !ok || !sfRefParams(in) {
			return false
		}
		if *in == "" || (*in)[0] != ' ' && (*in)[0] != ')' {
			return false
		}
	}
	return false
}

// sfRefBare parses a bare item; it returns the token for a Token.
func sfRefBare(in *string) (string, bool, bool) {
	s := *in
	if s == "" {
		return "", false, false
	}
	switch c := s[0]; {
	case c == '-' || c >= '0' && c <= '9':
		_, ok := sfRefNumber(in)
		return "", false, ok
	case c == '"':
		return "", false, sfRefString(in)
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '*':
		n := 1
		for n < len(s) && (robots.IsTokenChar(s[n]) || s[n] == ':' || s[n] == '/') {
			n++
		}
		*in = s[n:]
		return s[:n], true, true
	case c == ':':
		end := strings.IndexByte(s[1:], ':')
		if end < 0 {
			return "", false, false
		}
		b64 := s[1 : 1+end]
		*in = s[2+end:]
		if strings.Trim(b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") != "" {
			return "", false, false
		}
		if _, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "=")); err != nil {
			return "", false, false
		}
		if p := len(b64) - len(strings.TrimRight(b64, "=")); p > 0 && (len(b64)%4 != 0 || p > 2) {
			return "", false, false
		}
		return "", false, true
	case c == '?':
		if len(s) < 2 || s[1] != '0' && s[1] != '1' {
			return "", false, false
		}
		*in = s[2:]
		return "", false, true
	case c == '@':
		*in = s[1:]
		dec, ok := sfRefNumber(in)
		return "", false, ok && !dec
	case c == '%':
		return "", false, sfRefDisplay(in)
	}
	return "", false, false
}

// sfRefNumber parses an Integer or Decimal (RFC 9651 4.2.4) and reports
// whether it was a Decimal.
func sfRefNumber(in *string) (bool, bool) {
	s := strings.TrimPrefix(*in, "-")
	if s == "" || s[0] < '0' || s[0] > '9' {
		return false, false
	}
	num, dec := "", false
	for s != "" {
		c := s[0]
		if c >= '0' && c <= '9' {
			num += string(c)
		} else if c == '.' && !dec {
			if len(num) > 12 {
				return true, false
			}
			num, dec = num+".", true
		} else {
			break
		}
		s = s[1:]
		if !dec && len(num) > 15 || dec && len(num) > 16 {
			return dec, false
		}
	}
	*in = s
	if dec {
		frac := num[strings.Index(num, ".")+1:]
		return true, len(frac) >= 1 && len(frac) <= 3
	}
	return false, true
}

func sfRefString(in *string) bool {
	s := (*in)[1:]
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) || s[i+1] != '"' && s[i+1] != '\\' {
				return false
			}
			i++
		case c == '"':
			*in = s[i+1:]
			return true
		case c < 0x20 || c > 0x7E:
			return false
		}
	}
	return false
}

func sfRefDisplay(in *string) bool {
	s := *in
	if len(s) < 2 || s[1] != '"' {
		return false
	}
	var out []byte
	for i := 2; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c > 0x7E:
			return false
		case c == '%':
			if i+2 >= len(s) {
				return false
			}
			h := s[i+1 : i+3]
			if strings.Trim(h, "0123456789abcdef") != "" {
				return false
			}
			v, _ := strconv.ParseUint(h, 16, 8)
			out = append(out, byte(v))
			i += 2
		case c == '"':
			*in = s[i+1:]
			return utf8.Valid(out)
		default:
			out = append(out, c)
		}
	}
	return false
}

// FuzzStatement compares ParseStatement with the reference parser: the same
// validity, and the same preference for every key and for the vocabulary's
// labels.
func FuzzStatement(f *testing.F) {
	for _, s := range []string{"train-ai=y, search=n", `train-ai=y, train-ai, search=n, search="n"`, "train-ai;allow=n, train-ai=y",
		`train-ai;has;parameters="?";`, `a=1.5, b=:aGk=:, c=?0, d=@12, e=%"%c3%a9", f=(1 "x";p t), search=y`, "", "  x", "a=1.2345",
		"a=:YQ:, b=:YQ=:, c=:YQ==:, d=:Y:", "a=-", "*=*", "k=tok/en:x!"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, ok := sfRefDict(s)
		st := robots.ParseStatement(s)
		if st.Valid() != ok {
			t.Fatalf("%q: Valid() = %v, reference %v", s, st.Valid(), ok)
		}
		labels := append([]string{}, robots.VocabLabels()...)
		for k := range want {
			labels = append(labels, k)
		}
		for _, l := range labels {
			wantPref := robots.PrefUnknown
			switch want[l] {
			case "y":
				wantPref = robots.PrefAllow
			case "n":
				wantPref = robots.PrefDisallow
			}
			if got := st.Pref(l); got != wantPref {
				t.Fatalf("%q: Pref(%q) = %s, reference %s", s, l, got, wantPref)
			}
		}
	})
}
