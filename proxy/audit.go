package proxy

import (
	"io"
	"net/http"

	"github.com/rs/zerolog"
)

// Audit log field names: one JSON line per request carries these.
const (
	FieldClient       = "client"
	FieldMethod       = "method"
	FieldURL          = "url"
	FieldUserAgent    = "user_agent"
	FieldToken        = "product_token"
	FieldTokenSource  = "token_source"
	FieldCandidates   = "candidates"
	FieldDecision     = "decision"
	FieldReason       = "reason"
	FieldGroup        = "group"
	FieldFallback     = "star_fallback"
	FieldRule         = "rule"
	FieldRuleLine     = "rule_line"
	FieldRobotsURL    = "robots_url"
	FieldAccess       = "access_result"
	FieldRobotsStatus = "robots_status"
	FieldCache        = "cache"
	FieldStatus       = "status"
	FieldBytes        = "bytes"
	FieldDurationMS   = "duration_ms"
	FieldTunnel       = "tunnel"
	FieldError        = "error"
)

// audit writes the request's canonical log line and counts it in metrics.
func (p *Proxy) audit(r *http.Request, st *state, w *countingWriter) {
	status := w.status
	if status == 0 {
		status = st.status
	}
	decision, reason := "none", "not-proxied"
	if d := st.decision; d != nil {
		decision, reason = "deny", string(d.Reason)
		if d.Allowed {
			decision = "allow"
		}
	}
	p.opts.Metrics.countRequest(decision, reason)

	e := p.opts.Audit.Log().
		Str(FieldClient, r.RemoteAddr).
		Str(FieldMethod, r.Method).
		Str(FieldURL, requestURL(r)).
		Str(FieldUserAgent, r.Header.Get("User-Agent")).
		Str(FieldDecision, decision).
		Str(FieldReason, reason)
	if d := st.decision; d != nil {
		e = e.Str(FieldToken, d.Identity.Token).
			Str(FieldTokenSource, string(d.Identity.Source)).
			Strs(FieldCandidates, d.Identity.Candidates).
			Str(FieldRobotsURL, d.RobotsURL)
		if d.Verdict.Agent != "" {
			e = e.Str(FieldGroup, d.Verdict.Agent).Bool(FieldFallback, d.Verdict.Fallback)
		}
		if rule := d.Rule(); rule != nil {
			e = e.Str(FieldRule, rule.Text).Int(FieldRuleLine, rule.Line)
		}
		if d.Access != "" {
			e = e.Str(FieldAccess, string(d.Access)).Int(FieldRobotsStatus, d.Status).Str(FieldCache, string(d.Cache))
		}
		if d.Err != nil {
			e = e.Str(FieldError, d.Err.Error())
		}
	}
	if st.tunnel {
		e = e.Bool(FieldTunnel, true)
	}
	e.Int(FieldStatus, status).
		Int64(FieldBytes, w.bytes).
		Float64(FieldDurationMS, float64(p.opts.Now().Sub(st.start).Microseconds())/1000).
		Send()
}

// requestURL is the URL the client asked for: the absolute request target,
// or the CONNECT authority.
func requestURL(r *http.Request) string {
	if r.Method == http.MethodConnect {
		return r.Host
	}
	if r.RequestURI != "" {
		return r.RequestURI // the target exactly as sent
	}
	return r.URL.String()
}

// NewAuditLogger returns the zerolog logger audit lines are written with:
// JSON with a "time" field in RFC 3339 (seconds), no level.
func NewAuditLogger(w io.Writer) zerolog.Logger {
	return zerolog.New(w).With().Timestamp().Logger()
}
