package proxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/usage"
)

// TestUsageFieldsBoundTheLine adds the worst usage fields a site can
// cause to the worst free-text fields of TestFieldsBoundTheLine: the line
// stays under MaxAuditLineBytes.
func TestUsageFieldsBoundTheLine(t *testing.T) {
	v := strings.Repeat("\x01", 1<<20)
	var buf bytes.Buffer
	f := fieldWriter{max: MaxFieldBytesLimit}
	l := zerolog.New(&buf)
	e := l.Log()
	for _, k := range []string{FieldClient, FieldMethod, FieldURL, FieldUserAgent, FieldToken, FieldRobotsURL,
		FieldUser, FieldGroup, FieldRule, FieldError, FieldPathResolved, "spare"} {
		e = f.str(e, k, v)
	}
	e = f.strs(e, FieldCandidates, []string{v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v})
	ev := &usage.Evaluation{Purposes: usage.Purposes(), Refused: usage.TrainAI,
		Deciding: usage.Statement{Line: 1, Text: v}}
	for i := range 100 {
		for _, p := range usage.Purposes() {
			ev.Prefs = append(ev.Prefs, usage.Statement{Purpose: p, Value: usage.No, Line: i, Text: v})
		}
	}
	e = usageFields(f, e, ev)
	e.Send()
	t.Logf("line of %d octets", buf.Len())
	if buf.Len() > MaxAuditLineBytes-1024 {
		t.Errorf("line of %d octets; want at most %d (with 1 KiB left for fixed fields)", buf.Len(), MaxAuditLineBytes-1024)
	}
}
