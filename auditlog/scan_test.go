package auditlog

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// fullLine is a line as the proxy writes it, with every kind of field.
const fullLine = `{"client":"10.0.0.7:51234","method":"GET","url":"http://example.com/a?b=1","user_agent":"ExampleBot/1.0",` +
	`"decision":"deny","reason":"rule","enforced":true,"product_token":"examplebot","token_source":"user-agent",` +
	`"candidates":["examplebot","*"],"robots_url":"http://example.com/robots.txt","group":"examplebot","star_fallback":false,` +
	`"rule":"Disallow: /a","rule_line":3,"access_result":"successful","robots_status":200,"cache":"hit",` +
	`"robots_sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","robots_fetched_at":"2026-11-22T20:10:49.123456789Z",` +
	`"usage":{"train-ai":"n"},"usage_lines":["line 4: Content-Usage: train-ai=n"],"waited_ms":1.5,` +
	`"status":403,"bytes":120,"duration_ms":0.412,"time":"2026-11-22T20:10:50Z"}`

// view is what the fuzz target and the tests read of a line: "s" a
// string, "b" a bool, "n" an integer, "l" a list of strings, each the last
// member with its key (null: the zero value).
type view struct {
	S   string
	B   bool
	N   int64
	L   []string
	Has map[string]bool
}

func scanView(line []byte) (view, error) {
	var s Scanner
	v := view{Has: map[string]bool{}}
	var list [][]byte
	s.Reset(line)
	for s.Next() {
		k := string(s.Key())
		if k != "s" && k != "b" && k != "n" && k != "l" {
			continue
		}
		v.Has[k] = true
		if s.Null() {
			switch k {
			case "s":
				v.S = ""
			case "b":
				v.B = false
			case "n":
				v.N = 0
			case "l":
				v.L = nil
			}
			continue
		}
		var err error
		switch k {
		case "s":
			var b []byte
			b, err = s.Str()
			v.S = string(b)
		case "b":
			v.B, err = s.Bool()
		case "n":
			v.N, err = s.Int()
		case "l":
			list, err = s.Strs(list)
			v.L = v.L[:0]
			if v.L == nil {
				v.L = []string{}
			}
			for _, e := range list {
				v.L = append(v.L, string(e))
			}
		}
		if err != nil {
			if !errors.Is(s.Err(), err) {
				return v, errors.New("Err() is not the value reader's error")
			}
			return v, err
		}
	}
	return v, s.Err()
}

// jsonView is view as encoding/json reads it: the line into a
// map[string]json.RawMessage, then each field into its type.
func jsonView(line []byte) (view, error, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return view{}, err, false
	}
	v := view{Has: map[string]bool{}}
	typed := true // every field has the type read
	for k, dst := range map[string]any{"s": &v.S, "b": &v.B, "n": &v.N, "l": &v.L} {
		raw, ok := m[k]
		if !ok {
			continue
		}
		v.Has[k] = true
		if err := json.Unmarshal(raw, dst); err != nil {
			typed = false
		}
		if k == "l" && string(raw) != "null" && bytes.Contains(raw, []byte("null")) {
			typed = false // a null entry: the Scanner rejects it
		}
	}
	return v, nil, typed
}

// check compares the Scanner with encoding/json on one line: if the
// Scanner accepts it, encoding/json accepts it and reads the same values;
// if encoding/json rejects it, so does the Scanner; a syntax or truncation
// error of the Scanner is one of encoding/json's too. The Scanner rejects
// an object encoding/json accepts only for a field of the wrong type.
func check(t *testing.T, line []byte) {
	t.Helper()
	got, serr := scanView(line)
	want, jerr, typed := jsonView(line)
	isObject := jerr == nil && bytes.HasPrefix(bytes.TrimLeft(line, " \t\r\n"), []byte("{"))
	switch {
	case serr == nil && jerr != nil:
		t.Fatalf("%q: Scanner accepts, encoding/json: %v", line, jerr)
	case serr == nil && !typed:
		t.Fatalf("%q: Scanner accepts a field encoding/json cannot decode", line)
	case serr == nil:
		if got.S != want.S || got.B != want.B || got.N != want.N || !equalList(got.L, want.L) || len(got.Has) != len(want.Has) {
			t.Fatalf("%q: Scanner read %+v, encoding/json %+v", line, got, want)
		}
	case isObject && errors.Is(serr, ErrType) == false && !errors.Is(serr, ErrTooLong):
		t.Fatalf("%q: Scanner rejects a valid object: %v", line, serr)
	case isObject && errors.Is(serr, ErrType) && typed:
		t.Fatalf("%q: Scanner says a field has the wrong type; encoding/json decodes every field", line)
	}
}

func equalList(a, b []string) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzScanner compares the Scanner with encoding/json (see check).
func FuzzScanner(f *testing.F) {
	for _, s := range []string{
		fullLine,
		`{"s":"a","s":null}`, `{"n":1,"n":-0}`, `{"n":1e3}`, `{"n":1.0}`, `{"n":9223372036854775808}`,
		`{"s":"\ud800\udc00\ud800x\udc00\u00e9\t"}`, "{\"s\":\"\xff\xed\xa0\x80\"}", `{"\u0073":"key escaped"}`,
		`{"l":["a","b\n"],"l":[]}`, `{"l":null}`, `{"l":[null]}`, `{"b":true,"b":null}`,
		`{"x":tru}`, "{\"s\":\"a\tb\"}", `{"x":nullx}`, `{"x":[}}`, `{"x":[1,]}`, `{"x":{"a":1,}}`,
		`{"x":01}`, `{"x":-}`, `{"x":1.}`, `{"x":1e}`, `{"x":"\q"}`, `{"x":"\u12"}`, `{} x`, ` {} `, `{}{}`, `[]`, `null`,
		`{"x":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		check(t, line)
	})
}

// TestScannerAgainstJSON runs check on the fuzz seeds and on every prefix
// of a full line.
func TestScannerAgainstJSON(t *testing.T) {
	for n := 0; n <= len(fullLine); n++ {
		check(t, []byte(fullLine[:n]))
	}
}

// TestScannerTruncatedAnywhere: every proper prefix of a line (that is
// not blank) is ErrTruncated.
func TestScannerTruncatedAnywhere(t *testing.T) {
	var s Scanner
	for n := 1; n < len(fullLine); n++ {
		s.Reset([]byte(fullLine[:n]))
		for s.Next() {
		}
		if !errors.Is(s.Err(), ErrTruncated) {
			t.Fatalf("prefix %q: got %v, want %v", fullLine[:n], s.Err(), ErrTruncated)
		}
	}
}

// TestScannerMalformed: the inputs the two former readers disagreed on
// get encoding/json's answer.
func TestScannerMalformed(t *testing.T) {
	for _, c := range []struct {
		name, line string
		want       error
	}{
		{"literal cut short", `{"x":tru}`, ErrSyntax},
		{"raw tab in a string", "{\"x\":\"a\tb\"}", ErrSyntax},
		{"65 deep", `{"x":` + strings.Repeat("[", 64) + strings.Repeat("]", 64) + `}`, nil},
		{"literal run on", `{"x":nullx}`, ErrSyntax},
		{"mismatched brackets", `{"x":[}}`, ErrSyntax},
		{"10000 deep", `{"x":` + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1) + `}`, nil},
		{"10001 deep", `{"x":` + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + `}`, ErrTooDeep},
		{"too long", `{"x":"` + strings.Repeat("a", MaxLineBytes) + `"}`, ErrTooLong},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s Scanner
			s.Reset([]byte(c.line))
			for s.Next() {
			}
			if !errors.Is(s.Err(), c.want) || (c.want == nil) != (s.Err() == nil) {
				t.Errorf("got %v, want %v", s.Err(), c.want)
			}
			jerr := json.Unmarshal([]byte(c.line), new(map[string]json.RawMessage))
			if (jerr == nil) != (c.want == nil) && c.want != ErrTooLong {
				t.Errorf("encoding/json says %v; want the Scanner to agree", jerr)
			}
		})
	}
}

// TestScannerStrings: strings decode as encoding/json decodes them.
func TestScannerStrings(t *testing.T) {
	for _, in := range []string{
		`plain`, `a\"b\\c\/d\b\f\n\r\t`, `\u00e9\u20ac`, `\ud83d\ude00`, `\ud800`, `\udc00x`, `\ud800\u0041`,
		"caf\xc3\xa9", "bad \xff octet", "\xed\xa0\x80", strings.Repeat("long ascii ", 20) + "\xe2\x82\xac",
	} {
		line := []byte(`{"s":"` + in + `","s2":"` + in + `"}`)
		var want map[string]string
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		var s Scanner
		s.Reset(line)
		var got []string
		for s.Next() {
			v, err := s.Str()
			if err != nil {
				t.Fatalf("%q: %v", in, err)
			}
			got = append(got, string(v))
		}
		if s.Err() != nil || len(got) != 2 || got[0] != want["s"] || got[1] != want["s2"] {
			t.Errorf("%q: got %q (%v), want %q", in, got, s.Err(), want["s"])
		}
	}
}

// TestScannerAllocs: reading a line allocates nothing once warm.
func TestScannerAllocs(t *testing.T) {
	line := []byte(fullLine)
	var s Scanner
	var list [][]byte
	read := func() {
		s.Reset(line)
		for s.Next() {
			switch string(s.Key()) {
			case FieldURL, FieldDecision, FieldReason:
				_, _ = s.Str()
			case FieldRuleLine:
				_, _ = s.Int()
			case FieldCandidates:
				list, _ = s.Strs(list)
			}
		}
	}
	read()
	if n := testing.AllocsPerRun(100, read); n != 0 {
		t.Errorf("%v allocations per line, want 0", n)
	}
}

func BenchmarkScanner(b *testing.B) {
	line := []byte(fullLine)
	var s Scanner
	var list [][]byte
	b.ReportAllocs()
	b.SetBytes(int64(len(line)))
	for i := 0; i < b.N; i++ {
		s.Reset(line)
		for s.Next() {
			switch string(s.Key()) {
			case FieldURL, FieldDecision, FieldReason, FieldToken, FieldRobotsURL, FieldRule, FieldRobotsSHA256:
				_, _ = s.Str()
			case FieldRuleLine:
				_, _ = s.Int()
			case FieldCandidates:
				list, _ = s.Strs(list)
			}
		}
		if s.Err() != nil {
			b.Fatal(s.Err())
		}
	}
}
