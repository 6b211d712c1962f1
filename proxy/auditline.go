package proxy

import (
	"net/http"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/policy"
)

// lineHead starts an audit line with the fields every line starts with:
// client, method, url (url_truncated when cut, with url_length unless
// urlCutOnRead: the target was cut when read, its length is unknown),
// user_agent, decision and reason.
// The line goes to the audit log through sink (see lineEnd).
func (p *Proxy) lineHead(sink *lineSink, f fieldWriter, client, method, url string, urlCutOnRead bool, userAgent, decision, reason string) *zerolog.Event {
	sink.p, sink.err = p, nil
	l := zerolog.New(sink)
	e := l.Log()
	e = f.str(e, auditlog.FieldClient, client)
	e = f.str(e, auditlog.FieldMethod, method)
	if cut, whole := cutEncoded(url, f.max); urlCutOnRead || !whole {
		e = e.Str(auditlog.FieldURL, cut).Bool(auditlog.FieldURL+auditlog.TruncatedSuffix, true)
		if !urlCutOnRead {
			e = e.Int(auditlog.FieldURL+auditlog.LengthSuffix, len(url))
		}
	} else {
		e = e.Str(auditlog.FieldURL, url)
	}
	e = f.str(e, auditlog.FieldUserAgent, userAgent)
	return e.Str(auditlog.FieldDecision, decision).Str(auditlog.FieldReason, reason)
}

// lineEnd adds the fields every line ends with (status, bytes,
// duration_ms since start, time: now), writes the line through sink (the
// one lineHead was given) and returns the write's error: the line is then
// not in the log.
func lineEnd(sink *lineSink, e *zerolog.Event, status int, bytes int64, start, now time.Time) error {
	e.Int(auditlog.FieldStatus, status).
		Int64(auditlog.FieldBytes, bytes).
		Float64(auditlog.FieldDurationMS, float64(now.Sub(start).Microseconds())/1000).
		Time(auditlog.FieldTime, now).
		Send()
	return sink.err
}

// audit writes the request's canonical log line and counts it in metrics:
// status is the status sent to the client, bytes the response body size
// (-1 when unknown). It returns the line's write error. Callers go
// through auditOnce.
func (p *Proxy) audit(sink *lineSink, r *http.Request, st *state, status int, bytes int64) error {
	decision, reason, enforced := auditlog.DecisionNone, auditlog.ReasonNotProxied, true
	if st.decided {
		d := &st.decision
		decision, reason, enforced = auditlog.DecisionDeny, string(d.Reason), !d.ReportOnly
		if d.Allowed {
			decision = auditlog.DecisionAllow
		}
	}
	p.opts.Metrics.countRequest(decision, reason, enforced)
	if st.egress != nil { // only with egress steps
		p.opts.Metrics.countEgress(st.egress)
	}

	f := fieldWriter{max: p.opts.MaxFieldBytes}
	target := st.target
	if target == "" {
		target = requestURL(r, st.parent != nil)
	}
	e := p.lineHead(sink, f, r.RemoteAddr, r.Method, target, false, r.Header.Get("User-Agent"), decision, reason)
	if st.decided {
		d := &st.decision
		e = e.Bool(auditlog.FieldEnforced, enforced)
		e = p.whoFields(f, e, d) // product_token to star_fallback, see auditfrag.go
		if rule := d.Rule(); rule != nil {
			e = f.str(e, auditlog.FieldRule, rule.Text()).Int(auditlog.FieldRuleLine, rule.Line)
		}
		if d.Access != "" {
			e = e.Str(auditlog.FieldAccess, string(d.Access)).Int(auditlog.FieldRobotsStatus, d.Status).Str(auditlog.FieldCache, string(d.Cache))
			e = p.evidenceFields(e, d) // robots_sha256, robots_fetched_at
		}
		if c := d.UnreachableCause(); c != "" {
			e = e.Str(auditlog.FieldUnreachableCause, c)
		}
		if d.ResolvedPath != "" {
			e = f.str(e, auditlog.FieldPathResolved, d.ResolvedPath)
		}
		if d.Err != nil {
			e = f.str(e, auditlog.FieldError, d.Err.Error())
		}
		e = egressFields(usageFields(f, politeFields(e, st), d.Usage), st.egress)
	}
	if m := st.tunnelMode(); m != "" {
		e = e.Str(auditlog.FieldTunnel, m)
	}
	if st.parent != nil {
		e = e.Bool(auditlog.FieldIntercepted, true)
	}
	if proto := protocol(r); proto != "" {
		e = e.Str(auditlog.FieldProtocol, proto)
	}
	if st.cutOff != cutOffNone {
		e = e.Str(auditlog.FieldCutOff, st.cutOff.String())
	}
	return lineEnd(sink, e, status, bytes, st.start, p.opts.Now())
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

// protocol is the audit line's protocol field of r: the HTTP version it
// was read in, one of auditlog's Protocol values, "" for any other.
func protocol(r *http.Request) string {
	switch {
	case r.ProtoMajor == 2:
		return auditlog.ProtocolHTTP2
	case r.ProtoMajor == 1 && r.ProtoMinor == 1:
		return auditlog.ProtocolHTTP11
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return auditlog.ProtocolHTTP10
	}
	return ""
}

// fieldWriter adds bounded string fields to an audit event.
type fieldWriter struct {
	max int // encoded octets per field
}

// str adds key: val, cut to w.max octets of encoded JSON. A cut value is
// marked with KEY_truncated: true and KEY_length: the original length in
// octets.
func (w fieldWriter) str(e *zerolog.Event, key, val string) *zerolog.Event {
	cut, ok := cutEncoded(val, w.max)
	if ok {
		return e.Str(key, val)
	}
	return e.Str(key, cut).Bool(key+auditlog.TruncatedSuffix, true).Int(key+auditlog.LengthSuffix, len(val))
}

// strs adds a bounded list: at most auditlog.MaxListEntries entries, each cut to
// auditlog.MaxListEntryBytes; a cut list is marked KEY_truncated with KEY_length,
// the original number of entries.
func (w fieldWriter) strs(e *zerolog.Event, key string, vals []string) *zerolog.Event {
	total, cut := len(vals), false
	if total > auditlog.MaxListEntries {
		vals, cut = vals[:auditlog.MaxListEntries], true
	}
	var out []string // a copy, made only when an entry is cut
	for i, v := range vals {
		if c, ok := cutEncoded(v, auditlog.MaxListEntryBytes); !ok {
			if out == nil {
				out = append([]string(nil), vals...)
			}
			out[i], cut = c, true
		}
	}
	if out == nil {
		out = vals
	}
	e = e.Strs(key, out)
	if cut {
		e = e.Bool(key+auditlog.TruncatedSuffix, true).Int(key+auditlog.LengthSuffix, total)
	}
	return e
}

// cutEncoded returns the longest prefix of s whose JSON encoding (as
// zerolog writes it, quotes excluded) fits in max octets, cut on a UTF-8
// boundary, and whether that is all of s.
func cutEncoded(s string, max int) (string, bool) {
	if len(s) <= max/6 {
		return s, true // even all-escaped it fits
	}
	cost := 0
	for i := 0; i < len(s); {
		c := s[i]
		n, size := 1, 1
		switch {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n = 2
		case c < 0x20:
			n = 6 // \u00XX
		case c >= utf8.RuneSelf:
			r, sz := utf8.DecodeRuneInString(s[i:])
			size, n = sz, sz
			if r == utf8.RuneError && sz == 1 {
				n = 6 // \ufffd
			}
		}
		if cost+n > max {
			return s[:i], false
		}
		cost += n
		i += size
	}
	return s, true
}

// maxUsageRuleBytes bounds auditlog.FieldUsageRule (a robots.txt line) like one
// entry of a list field, so that the usage fields add at most about 5 KiB
// to a line (see auditlog.MaxWrittenLineBytes).
const maxUsageRuleBytes = 2 * auditlog.MaxListEntryBytes

// usageFields adds the usage fields of the decision to an audit line.
func usageFields(f fieldWriter, e *zerolog.Event, ev *policy.Usage) *zerolog.Event {
	if ev == nil {
		return e
	}
	if len(ev.Purposes) > 0 {
		e = f.strs(e, auditlog.FieldPurposes, ev.Purposes)
	}
	if values := ev.Prefs.Values(); len(values) > 0 {
		dict := zerolog.Dict()
		for _, purpose := range policy.Purposes() {
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

// licenseFields adds the license fields of the decision to an audit line.
func licenseFields(f fieldWriter, e *zerolog.Event, ev *policy.Usage) *zerolog.Event {
	if ev.LicenseLink != "" {
		e = f.str(e, auditlog.FieldLicenseLink, ev.LicenseLink)
	}
	l := ev.License
	if l == nil {
		return e
	}
	e = f.str(e, auditlog.FieldLicenseURL, l.URL)
	if l.Source != "" {
		e = e.Str(auditlog.FieldLicenseSource, string(l.Source))
	}
	if l.SHA256 != [32]byte{} {
		e = e.Hex(auditlog.FieldLicenseSHA256, l.SHA256[:])
	}
	if !l.FetchedAt.IsZero() {
		e = appendTime(e, auditlog.FieldLicenseFetchedAt, l.FetchedAt)
	}
	e = e.Str(auditlog.FieldLicenseDecision, string(l.Decision))
	if l.Element != "" {
		e = f.str(e, auditlog.FieldLicenseElement, l.Element)
	}
	if l.Refused != "" {
		e = e.Str(auditlog.FieldLicenseRefused, l.Refused)
	}
	if l.Err != nil {
		e = f.str(e, auditlog.FieldLicenseError, l.Err.Error())
	}
	return e
}

// politeFields adds the politeness fields of a request to its audit line.
func politeFields(e *zerolog.Event, st *state) *zerolog.Event {
	if st.ticket == nil {
		return e
	}
	t := st.ticket.Answer()
	if t.Waited > 0 || t.Refused != "" {
		e = e.Float64(auditlog.FieldWaitedMS, ms(t.Waited))
	}
	if r := st.decision.RobotsReason; r != "" {
		e = e.Str(auditlog.FieldRobotsReason, string(r))
	}
	if t.WaitCause != "" {
		e = e.Str(auditlog.FieldWaitReason, string(t.WaitCause))
	}
	if t.Delay > 0 {
		e = e.Float64(auditlog.FieldCrawlDelayMS, ms(t.Delay))
	}
	if t.Backoff > 0 {
		e = e.Float64(auditlog.FieldBackoffMS, ms(t.Backoff))
	}
	if t.Refused != "" {
		e = e.Float64(auditlog.FieldRetryAfterMS, ms(t.RetryAfter))
	}
	return e
}

// ms is d in milliseconds, to the microsecond.
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// egressFields adds what the egress steps did to the audit line.
func egressFields(e *zerolog.Event, x *egress.Exchange) *zerolog.Event {
	if x == nil {
		return e
	}
	r := &x.Record
	if r.SignatureKeyID != "" {
		e = e.Str(auditlog.FieldSignatureKeyID, r.SignatureKeyID).Int64(auditlog.FieldSignatureCreated, r.SignatureCreated.Unix())
	}
	if r.Price != "" {
		e = e.Str(auditlog.FieldPrice, r.Price)
	}
	if r.Charged != "" {
		e = e.Str(auditlog.FieldCharged, r.Charged)
	}
	if r.Currency != "" {
		e = e.Str(auditlog.FieldCurrency, r.Currency)
	}
	if r.NotPaid != "" {
		e = e.Str(auditlog.FieldNotPaid, r.NotPaid)
	}
	if r.Breach != "" {
		e = e.Str(auditlog.FieldPaymentBreach, r.Breach)
	}
	if x.ReportOnly {
		e = e.Str(auditlog.FieldEgressSkipped, auditlog.EgressSkippedReportOnly)
	}
	return e
}

// Refusal is a request refused before the proxy could decide it: by the
// HTTP server itself (431, 400, 501, ...), by a client timeout, by the
// request target limit (414), or cut off by shutdown before its handler
// returned. AuditRefusal turns it into the request's one audit line.
type Refusal struct {
	// Client is the client's address, host:port.
	Client string
	// Method, Target and UserAgent are what the client sent, "" when they
	// could not be recovered.
	Method, Target, UserAgent string
	// TargetCut reports that Target is only the start of the target (the
	// rest was never read or not kept); the line marks url_truncated.
	TargetCut bool
	// Status is the status sent to the client, 0 when none was.
	Status int
	// Bytes is the response body size sent, in octets.
	Bytes int64
	// Reason is the audit line's reason.
	Reason policy.Reason
	// Cause labels robotsproxy_client_refusals_total; "" counts nothing
	// there.
	Cause RefusalCause
	// CutOff is the cut_off field, "" for none.
	CutOff string
	// Protocol is the protocol field (auditlog's Protocol values), "" when
	// not known.
	Protocol string
	// Intercepted: the request was read inside an intercepted tunnel.
	Intercepted bool
	// Start is when the request's first octet arrived; zero means now.
	Start time.Time
	// Err is what went wrong, if known.
	Err error
}

// AuditRefusal writes the audit line of a refused request, with the same
// field names and bounds as every other line (decision "deny"), and counts
// it in robotsproxy_requests_total and, when r.Cause is set, in
// robotsproxy_client_refusals_total. It returns the line's write error:
// the line is then not in the log (the audit writer counts it). It is
// safe for concurrent use.
func (p *Proxy) AuditRefusal(r Refusal) error {
	if r.Cause != "" {
		p.opts.Metrics.CountClientRefusal(r.Cause)
	}
	p.opts.Metrics.countRequest(auditlog.DecisionDeny, string(r.Reason), true)
	now := p.opts.Now()
	if r.Start.IsZero() {
		r.Start = now
	}
	f := fieldWriter{max: p.opts.MaxFieldBytes}
	sink := &lineSink{}
	e := p.lineHead(sink, f, r.Client, r.Method, r.Target, r.TargetCut, r.UserAgent, auditlog.DecisionDeny, string(r.Reason))
	if r.CutOff != "" {
		e = e.Str(auditlog.FieldCutOff, r.CutOff)
	}
	if r.Intercepted {
		e = e.Bool(auditlog.FieldIntercepted, true)
	}
	if r.Protocol != "" {
		e = e.Str(auditlog.FieldProtocol, r.Protocol)
	}
	if r.Err != nil {
		e = f.str(e, auditlog.FieldError, r.Err.Error())
	}
	return lineEnd(sink, e, r.Status, r.Bytes, r.Start, now)
}
