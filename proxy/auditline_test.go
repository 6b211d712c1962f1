package proxy

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
)

func TestCutEncoded(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
		ok   bool
	}{
		{"short", "abc", 64, "abc", true},
		{"exact", strings.Repeat("a", 64), 64, strings.Repeat("a", 64), true},
		{"long", strings.Repeat("a", 65), 64, strings.Repeat("a", 64), false},
		{"escapes count double", strings.Repeat(`"`, 40), 64, strings.Repeat(`"`, 32), false},
		{"control octets count six", strings.Repeat("\x01", 20), 64, strings.Repeat("\x01", 10), false},
		{"invalid UTF-8 counts six", strings.Repeat("\xff", 20), 64, strings.Repeat("\xff", 10), false},
		{"rune boundary", strings.Repeat("a", 63) + "ö", 64, strings.Repeat("a", 63), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cutEncoded(tt.in, tt.max)
			if got != tt.want || ok != tt.ok {
				t.Errorf("cutEncoded(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestFieldsBoundTheLine writes the worst a client can send into every
// free-text field and checks the encoded line against auditlog.MaxWrittenLineBytes.
func TestFieldsBoundTheLine(t *testing.T) {
	hostile := []string{
		strings.Repeat("a", 1<<20),
		strings.Repeat("\x01", 1<<20),
		strings.Repeat("\xff", 1<<20),
		strings.Repeat(`"\`, 1<<19),
	}
	for _, v := range hostile {
		var buf bytes.Buffer
		f := fieldWriter{max: auditlog.MaxFieldBytesLimit}
		l := zerolog.New(&buf)
		e := l.Log()
		for _, k := range []string{auditlog.FieldClient, auditlog.FieldMethod, auditlog.FieldURL, auditlog.FieldUserAgent, auditlog.FieldToken, auditlog.FieldRobotsURL,
			auditlog.FieldUser, auditlog.FieldGroup, auditlog.FieldRule, auditlog.FieldError, "path_resolved", "spare"} {
			e = f.str(e, k, v)
		}
		cands := make([]string, 1000)
		for i := range cands {
			cands[i] = v[:1000]
		}
		e = f.strs(e, auditlog.FieldCandidates, cands)
		e.Send()
		if buf.Len() > auditlog.MaxWrittenLineBytes-1024 {
			t.Errorf("line of %d octets for %q...; want at most %d (with 1 KiB left for fixed fields)", buf.Len(), v[:4], auditlog.MaxWrittenLineBytes-1024)
		}
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %v", err)
		}
		if m[auditlog.FieldURL+"_truncated"] != true || m[auditlog.FieldURL+"_length"] != float64(len(v)) {
			t.Errorf("url_truncated = %v, url_length = %v; want true, %d", m[auditlog.FieldURL+"_truncated"], m[auditlog.FieldURL+"_length"], len(v))
		}
		if m[auditlog.FieldCandidates+"_length"] != float64(1000) || len(m[auditlog.FieldCandidates].([]any)) != auditlog.MaxListEntries {
			t.Errorf("candidates: %d entries, candidates_length %v; want %d, 1000", len(m[auditlog.FieldCandidates].([]any)), m[auditlog.FieldCandidates+"_length"], auditlog.MaxListEntries)
		}
	}
}
