package accesslog

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// apacheLog returns the first n lines of the real Apache log in
// testdata/accesslog (all of them for n < 0).
func apacheLog(t testing.TB, n int) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "testdata", "accesslog", "apache_logs.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if n < 0 {
		return b
	}
	i := 0
	for ; n > 0 && i < len(b); n-- {
		i += bytes.IndexByte(b[i:], '\n') + 1
	}
	return b[:i]
}

// A log most of whose first lines do not parse in the chosen format is
// refused with a *FormatError that names the format they look like; a
// log in the format, with a few bad lines, is read. (The proxy's own
// audit lines, read as combined: TestRunAuditAccessLogBadInputIsLoud.)
func TestFormatError(t *testing.T) {
	h := historyDir(t, map[string]string{"2015-01-01T00:00:00Z.txt": "User-agent: *\nDisallow: /private/\n"})
	apache := apacheLog(t, 300)
	var bz bytes.Buffer
	bz.WriteString("BZh91AY&SY")
	bz.Write(bytes.Repeat([]byte{0x8f, 0x17, 0xa2, 0x00, 0x11, '\n'}, 200))
	jsonLines := strings.Repeat(`{"ip":"203.0.113.7","ts":"2026-11-20T10:00:00Z","req":"GET / HTTP/1.1","ua":"ExampleBot/1.0"}`+"\n", 3)
	goodThenBad := append(apacheLog(t, SampleLines), bytes.Repeat([]byte("garbage\n"), 500)...)
	tests := []struct {
		name   string
		log    []byte
		parser Parser
		looks  string // "" for no error
		want   string
	}{
		{"an Apache log as json", apache, NewJSONParser(DefaultJSONFields()), LooksCombined, "100 of its first 100 lines do not parse as json (line 1: malformed: "},
		{"JSON lines as combined", []byte(jsonLines), &Combined{}, LooksJSON, "give -log-format json"},
		{"JSON lines with other keys", []byte(jsonLines), NewJSONParser(DefaultJSONFields()), LooksJSON, "JSON lines with other keys (ip, req, ts, ua): name them with -json-fields"},
		{"bzip2 as combined", bz.Bytes(), &Combined{}, "", "they are not text: bzip2-compressed data"},
		{"mostly bad after good", goodThenBad, &Combined{}, "", ""},
		{"the Apache log", apacheLog(t, -1), &Combined{}, "", ""},
		{"blank", []byte("\n\n  \n"), &Combined{}, "", ""},
	}
	for _, tt := range tests {
		a, err := New(Options{History: h, NewParser: func() Parser { return tt.parser }})
		if err != nil {
			t.Fatal(err)
		}
		err = a.Read(context.Background(), "x.log", bytes.NewReader(tt.log))
		a.Close()
		var fe *FormatError
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (!errors.As(err, &fe) || fe.LooksLike != tt.looks || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v (looks like %q), want %q", tt.name, err, tt.looks, tt.want)
		}
	}
}

// Every skipped line is located, in json all of them, but they are kept
// on disk, not in memory: a hostile log of many bad lines past the first
// SampleLines costs no more memory than a good one.
func TestSkippedLinesStayOnDisk(t *testing.T) {
	h := historyDir(t, map[string]string{"2015-01-01T00:00:00Z.txt": "User-agent: *\nDisallow: /private/\n"})
	log := append(apacheLog(t, SampleLines), bytes.Repeat([]byte("x\n"), 200_000)...)
	a, err := New(Options{History: h})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Read(context.Background(), "x.log", bytes.NewReader(log)); err != nil {
		t.Fatal(err)
	}
	r := a.Result(0)
	if r.SkippedLines != nil || r.SkippedCount() != 200_000 {
		t.Fatalf("skipped lines in memory: %d, counted %d", len(r.SkippedLines), r.SkippedCount())
	}
	var out bytes.Buffer
	if err := Render(&out, r, "text"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "skipped lines (the first 10 of 200000; -format json lists every one)\nx.log:101 malformed: no client address\n") ||
		strings.Contains(out.String(), "x.log:111 ") {
		t.Errorf("text: %s", out.String())
	}
	out.Reset()
	if err := Render(&out, r, "json"); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), `"cause":"malformed"`); n != 200_000 {
		t.Errorf("json locates %d skipped lines", n)
	}
}
