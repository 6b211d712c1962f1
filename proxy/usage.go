package proxy

import (
	"net/http"
	"slices"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/usage"
)

// maxUsageRuleBytes bounds auditlog.FieldUsageRule (a robots.txt line) like one
// entry of a list field, so that the usage fields add at most about 5 KiB
// to a line (see auditlog.MaxWrittenLineBytes).
const maxUsageRuleBytes = 2 * auditlog.MaxListEntryBytes

// observeUsage adds the preferences of the response's Content-Usage
// header field (draft-ietf-aipref-attach-05 section 2) to the decision's,
// for the audit line, and observes its Link header field
// (observeLicenseLink). The field comes with the response, after the
// request was decided and sent: it cannot deny the request it answers.
// req is the client's request.
func (p *Proxy) observeUsage(req *http.Request, st *state, resp *http.Response) {
	p.observeLicenseLink(req, st, resp)
	h := usage.FromHeader(resp.Header.Values("Content-Usage"))
	if len(h) == 0 {
		return
	}
	d := &st.decision
	if d.Usage == nil {
		d.Usage = &usage.Evaluation{}
	}
	d.Usage.Prefs = append(d.Usage.Prefs, h...)
}

// usageFields adds the usage fields of the decision to an audit line.
func usageFields(f fieldWriter, e *zerolog.Event, ev *usage.Evaluation) *zerolog.Event {
	if ev == nil {
		return e
	}
	if len(ev.Purposes) > 0 {
		e = f.strs(e, auditlog.FieldPurposes, ev.Purposes)
	}
	if values := ev.Prefs.Values(); len(values) > 0 {
		dict := zerolog.Dict()
		for _, purpose := range usage.Purposes() {
			if v, ok := values[purpose]; ok {
				dict = dict.Str(purpose, string(v))
			}
		}
		e = e.Dict(auditlog.FieldUsage, dict)
		lines := make([]string, 0, len(ev.Prefs))
		for _, s := range ev.Prefs {
			if l := s.String(); !slices.Contains(lines, l) { // one line may state several purposes
				lines = append(lines, l)
			}
		}
		e = f.strs(e, auditlog.FieldUsageLines, lines)
	}
	if ev.Refused != "" {
		e = e.Str(auditlog.FieldUsageRefused, ev.Refused)
		e = fieldWriter{max: maxUsageRuleBytes}.str(e, auditlog.FieldUsageRule, ev.Deciding.String())
	}
	return licenseFields(f, e, ev)
}
