package proxy

import (
	"io"
	"net/http"
	"sync"
	"time"

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
	FieldEnforced     = "enforced"
	FieldPathResolved = "path_resolved"
	FieldReason       = "reason"
	FieldGroup        = "group"
	FieldFallback     = "star_fallback"
	FieldRule         = "rule"
	FieldRuleLine     = "rule_line"
	FieldRobotsURL    = "robots_url"
	FieldAccess       = "access_result"
	FieldRobotsStatus = "robots_status"
	FieldCache        = "cache"
	FieldRobotsSHA256 = "robots_sha256"
	// FieldRobotsFetchedAt is when the robots.txt in force was fetched
	// (RFC 3339 with nanoseconds, UTC).
	FieldRobotsFetchedAt = "robots_fetched_at"
	FieldStatus          = "status"
	FieldBytes           = "bytes"
	FieldDurationMS      = "duration_ms"
	FieldTunnel          = "tunnel"
	FieldIntercepted     = "intercepted"
	FieldUser            = "user"
	FieldError           = "error"
	// FieldTime is when the request finished: Options.Now, in RFC 3339
	// with seconds (zerolog's TimeFieldFormat, which robotsproxy leaves
	// at its default).
	FieldTime = "time"
)

// FieldUnreachableCause is why the robots.txt in force was unreachable
// ("dns", "tls", "status 500", ...; see access.Cause), on lines whose
// access_result is "unreachable" and whose cause is known.
const FieldUnreachableCause = "unreachable_cause"

// audit writes the request's canonical log line and counts it in metrics,
// once per request: status is the status sent to the client, bytes the
// response body size (-1 when unknown).
func (p *Proxy) audit(r *http.Request, st *state, status int, bytes int64) {
	if st.audited {
		return
	}
	st.audited = true
	decision, reason, enforced := "none", "not-proxied", true
	if st.decided {
		d := &st.decision
		decision, reason, enforced = "deny", string(d.Reason), !d.ReportOnly
		if d.Allowed {
			decision = "allow"
		}
	}
	p.opts.Metrics.countRequest(decision, reason, enforced)

	f := fieldWriter{max: p.opts.MaxFieldBytes}
	e := p.opts.Audit.Log()
	e = f.str(e, FieldClient, r.RemoteAddr)
	e = f.str(e, FieldMethod, r.Method)
	target := st.target
	if target == "" {
		target = requestURL(r, st.parent != nil)
	}
	e = f.str(e, FieldURL, target)
	e = f.str(e, FieldUserAgent, r.Header.Get("User-Agent"))
	e = e.Str(FieldDecision, decision).Str(FieldReason, reason)
	if st.decided {
		d := &st.decision
		e = e.Bool(FieldEnforced, enforced)
		e = f.str(e, FieldToken, d.Identity.Token)
		e = e.Str(FieldTokenSource, string(d.Identity.Source))
		e = f.strs(e, FieldCandidates, d.Identity.Candidates)
		e = f.str(e, FieldRobotsURL, d.RobotsURL)
		if d.Identity.User != "" {
			e = f.str(e, FieldUser, d.Identity.User)
		}
		if d.Verdict.Agent != "" {
			e = f.str(e, FieldGroup, d.Verdict.Agent).Bool(FieldFallback, d.Verdict.Fallback)
		}
		if rule := d.Rule(); rule != nil {
			e = f.str(e, FieldRule, rule.Text()).Int(FieldRuleLine, rule.Line)
		}
		if d.Access != "" {
			e = e.Str(FieldAccess, string(d.Access)).Int(FieldRobotsStatus, d.Status).Str(FieldCache, string(d.Cache))
			if d.RobotsSHA256 != [32]byte{} {
				e = e.Hex(FieldRobotsSHA256, d.RobotsSHA256[:])
			}
			if !d.RobotsFetchedAt.IsZero() {
				e = appendTime(e, FieldRobotsFetchedAt, d.RobotsFetchedAt)
			}
		}
		if c := d.UnreachableCause(); c != "" {
			e = e.Str(FieldUnreachableCause, c)
		}
		if d.ResolvedPath != "" {
			e = f.str(e, FieldPathResolved, d.ResolvedPath)
		}
		if d.Err != nil {
			e = f.str(e, FieldError, d.Err.Error())
		}
		e = usageFields(f, politeFields(e, st), d.Usage) // issue 11
	}
	if st.tunnel != "" {
		e = e.Str(FieldTunnel, st.tunnel)
	}
	if st.parent != nil {
		e = e.Bool(FieldIntercepted, true)
	}
	if st.cutOff != "" {
		e = e.Str(FieldCutOff, st.cutOff)
	}
	now := p.opts.Now()
	e.Int(FieldStatus, status).
		Int64(FieldBytes, bytes).
		Float64(FieldDurationMS, float64(now.Sub(st.start).Microseconds())/1000).
		Time(FieldTime, now).
		Send()
}

// appendTime adds key: t in UTC, RFC 3339 with nanoseconds, formatted
// without allocating.
func appendTime(e *zerolog.Event, key string, t time.Time) *zerolog.Event {
	var buf [48]byte
	b := append(buf[:0], '"')
	b = t.UTC().AppendFormat(b, time.RFC3339Nano) // digits, '-', ':', '.', 'T', 'Z': no escaping
	return e.RawJSON(key, append(b, '"'))
}

// requestURL is the URL the client asked for: the absolute request target,
// or the CONNECT authority. Inside an intercepted tunnel the target is in
// origin form, so the URL goproxy built (https://host/path) is used.
func requestURL(r *http.Request, intercepted bool) string {
	if r.Method == http.MethodConnect {
		return r.Host
	}
	if r.RequestURI != "" && !intercepted {
		return r.RequestURI // the target exactly as sent
	}
	return r.URL.String()
}

// NewAuditLogger returns the zerolog logger audit lines are written with:
// JSON, no level. The proxy adds each line's "time" (FieldTime) itself,
// from its Options.Now, read once per line for the time and the duration.
func NewAuditLogger(w io.Writer) zerolog.Logger {
	return zerolog.New(w)
}

// auditBody wraps a response body from inside an intercepted tunnel: it
// counts the octets goproxy copies to the client and writes the audit
// line before the client can have the whole answer. goproxy writes the
// response to the tunnel itself and closes the body only after the last
// octet is sent, so the line is written when the last octets are read:
// on the Read that reaches the body's length, or on the Read that ends a
// body without one (EOF: a chunked body's last chunk goes out after it).
// Close writes it otherwise (a body that failed or was not read to its
// end).
type auditBody struct {
	io.ReadCloser
	n      int64
	length int64 // the response's ContentLength, -1 when unknown
	status int
	// The audit line's writer and arguments (no closure: one allocation
	// less per request).
	p    *Proxy
	req  *http.Request
	st   *state
	once sync.Once
}

func (b *auditBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	if err == io.EOF || b.length >= 0 && b.n >= b.length {
		b.finish() // before goproxy sends these octets
	}
	return n, err
}

func (b *auditBody) Close() error {
	err := b.ReadCloser.Close()
	b.finish()
	b.st.ticket.Release() // issue 11: the request is no longer in flight
	return err
}

// finish writes the request's audit line, once.
func (b *auditBody) finish() {
	b.once.Do(func() { b.p.audit(b.req, b.st, b.status, b.n) })
}
