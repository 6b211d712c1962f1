package proxy

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestUsageFieldsBoundTheLine adds the worst usage fields a site can
// cause to the worst free-text fields of TestFieldsBoundTheLine: the line
// stays under auditlog.MaxWrittenLineBytes.
func TestUsageFieldsBoundTheLine(t *testing.T) {
	v := strings.Repeat("\x01", 1<<20)
	var buf bytes.Buffer
	f := fieldWriter{max: auditlog.MaxFieldBytesLimit}
	l := zerolog.New(&buf)
	e := l.Log()
	for _, k := range []string{auditlog.FieldClient, auditlog.FieldMethod, auditlog.FieldURL, auditlog.FieldUserAgent, auditlog.FieldToken, auditlog.FieldRobotsURL,
		auditlog.FieldUser, auditlog.FieldGroup, auditlog.FieldRule, auditlog.FieldError, auditlog.FieldPathResolved, "spare"} {
		e = f.str(e, k, v)
	}
	e = f.strs(e, auditlog.FieldCandidates, []string{v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v})
	ev := &policy.Usage{Purposes: policy.Purposes(), Refused: policy.PurposeTrainAI,
		Deciding: policy.Statement{Line: 1, Text: v}}
	for i := range 100 {
		for _, p := range policy.Purposes() {
			ev.Prefs = append(ev.Prefs, policy.Statement{Purpose: p, Value: policy.UsageNo, Line: i, Text: v})
		}
	}
	e = usageFields(f, e, ev)
	e.Send()
	t.Logf("line of %d octets", buf.Len())
	if buf.Len() > auditlog.MaxWrittenLineBytes-1024 {
		t.Errorf("line of %d octets; want at most %d (with 1 KiB left for fixed fields)", buf.Len(), auditlog.MaxWrittenLineBytes-1024)
	}
}
