package report

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func gz(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// line is an audit line for b.example at minute m past 10:00.
func line(m int, access string) string {
	return fmt.Sprintf(`{"time":"2026-11-22T10:%02d:00Z","url":"https://b.example/","decision":"allow","reason":"rule","product_token":"t","access_result":%q}`+"\n", m, access)
}

// A rotated set named in the wrong order is read oldest first: the
// unreachable spell crossing the files (10:10 to 10:25) counts 15 min.
func TestRotatedSetReadOldestFirst(t *testing.T) {
	dir := t.TempDir()
	oldest := writeFile(t, dir, "audit-2026-11-22T10-20-00.000.log.gz", gz(t, line(0, "successful")+line(10, "unreachable")))
	middle := writeFile(t, dir, "audit-2026-11-22T10-30-00.000.log", line(20, "unreachable")+line(25, "unreachable"))
	current := writeFile(t, dir, "audit.log", line(30, "successful")+line(40, "unreachable"))
	rep, err := Collect([]string{current, middle, oldest}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, in := range rep.Inputs {
		order = append(order, filepath.Base(in.Name))
	}
	if want := []string{filepath.Base(oldest), filepath.Base(middle), filepath.Base(current)}; strings.Join(order, " ") != strings.Join(want, " ") {
		t.Errorf("read order: got %v, want %v", order, want)
	}
	if !rep.Inputs[0].Gzip || rep.Inputs[1].Gzip {
		t.Errorf("gzip: got %+v, want the oldest only", rep.Inputs)
	}
	h := rep.Hosts.Rows[0]
	if h.UnreachableSpells != 2 || h.UnreachableSeconds != 15*60 || !h.UnreachableAtEnd || rep.Summary.Requests != 6 {
		t.Errorf("got %d spells, %d s, at end %v, %d requests; want 2 spells, 900 s, at end, 6 requests", h.UnreachableSpells, h.UnreachableSeconds, h.UnreachableAtEnd, rep.Summary.Requests)
	}
}

func TestBadInput(t *testing.T) {
	two := line(0, "successful") + line(1, "successful")
	corrupt := []byte(gz(t, strings.Repeat(two, 50)))
	corrupt[len(corrupt)/2] ^= 0xff // a damaged deflate stream
	for _, c := range []struct {
		name     string
		content  string
		requests uint64
		skipped  uint64
		inputErr string // substring of the one input error, "" for none
	}{
		{"gzip recognised by magic, not name", gz(t, two), 2, 0, ""},
		{"gzip cut short", gz(t, two)[:30], 0, 0, "unreadable gzip stream"},
		{"gzip header damaged", "\x1f\x8bnot really gzip", 0, 0, "unreadable gzip stream"},
		{"gzip stream damaged", string(corrupt), 0, 0, "unreadable gzip stream"},
		{"blank lines ignored, CRLF accepted", "\n" + strings.ReplaceAll(two, "\n", "\r\n") + "\n\n", 2, 0, ""},
		{"CRLF blank lines ignored", "\r\n" + strings.ReplaceAll(two, "\n", "\r\n") + "\r\n\r\n", 2, 0, ""},
		{"last line without newline", strings.TrimSuffix(two, "\n"), 2, 0, ""},
		{"last line cut", two + `{"time":"2026-11-22T10:02:00Z","deci`, 2, 1, ""},
		{"line too long", two + `{"x":"` + strings.Repeat("a", maxLine) + "\"}\n" + two, 4, 1, ""},
		{"binary garbage", "\x00\x01\x02\xff\n" + two, 2, 1, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, t.TempDir(), "audit.log", c.content)
			rep, err := Collect([]string{p}, Options{})
			if err != nil {
				t.Fatalf("Collect: %v", err)
			}
			s := rep.Summary
			if c.name != "gzip stream damaged" && (s.Requests != c.requests || s.Skipped != c.skipped) {
				t.Errorf("got %d requests, %d skipped (%v), want %d, %d", s.Requests, s.Skipped, s.SkippedBy, c.requests, c.skipped)
			}
			switch {
			case c.inputErr == "" && len(s.InputErrors) > 0:
				t.Errorf("got input errors %+v, want none", s.InputErrors)
			case c.inputErr != "" && (len(s.InputErrors) != 1 || !strings.Contains(s.InputErrors[0].Error, c.inputErr)):
				t.Errorf("got input errors %+v, want one with %q", s.InputErrors, c.inputErr)
			}
		})
	}
}

func TestStdinAndFiles(t *testing.T) {
	p := writeFile(t, t.TempDir(), "later.log", line(30, "successful"))
	rep, err := Collect([]string{p, "-"}, Options{Stdin: strings.NewReader(gz(t, line(0, "successful")+line(1, "successful")))})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Requests != 3 || rep.Inputs[0].Name != "-" || !rep.Inputs[0].Gzip || rep.Inputs[0].Lines != 2 {
		t.Errorf("got %d requests, inputs %+v; want 3, stdin (gzip, 2 lines) first", rep.Summary.Requests, rep.Inputs)
	}
}

// A damaged gzip header on stdin is reported, not read as text.
func TestStdinBadGzip(t *testing.T) {
	rep, err := Collect([]string{"-"}, Options{Stdin: strings.NewReader("\x1f\x8bnot gzip\n" + line(0, "successful"))})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Summary
	if s.Lines != 0 || len(s.InputErrors) != 1 || !strings.Contains(s.InputErrors[0].Error, "unreadable gzip") {
		t.Errorf("got %d lines, input errors %+v; want 0 lines and one unreadable gzip stream", s.Lines, s.InputErrors)
	}
}

func TestCollectErrors(t *testing.T) {
	_, err := Collect([]string{filepath.Join(t.TempDir(), "missing.log")}, Options{})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: got %v, want ErrNotExist", err)
	}
	_, err = Collect([]string{"-", "-"}, Options{Stdin: strings.NewReader("")})
	if err == nil || !strings.Contains(err.Error(), "named twice") {
		t.Errorf(`"-" twice: got %v, want an error`, err)
	}
}
