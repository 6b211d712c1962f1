package loggen

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/audit"
)

var tlds = []string{"com", "org", "net", "de", "io"}

// next returns the next line, newline included; the slice is reused.
func (g *gen) next() []byte {
	g.t = g.t.Add(time.Duration(g.rng.ExpFloat64() * float64(g.c.Step)))
	ts := g.t.Unix()
	cr := g.pick()
	h := int(g.zipf.Uint64())
	host := "www.site" + strconv.Itoa(h) + "." + tlds[h%len(tlds)]
	path := paths[g.rng.IntN(len(paths))]
	connect := g.rng.IntN(100) < 4
	b := g.buf[:0]
	b = append(b, `{"`+auditlog.FieldTime+`":"`...)
	b = g.t.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","`+auditlog.FieldClient+`":"10.0.`...)
	b = strconv.AppendInt(b, int64(h%250), 10)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(len(cr.token)*7%250), 10)
	b = append(b, `:5`...)
	b = strconv.AppendInt(b, int64(1000+g.rng.IntN(9000)), 10)
	url := "https://" + host + path
	method := "GET"
	if connect {
		url, method = host+":443", "CONNECT"
	}
	b = append(b, `","`+auditlog.FieldMethod+`":"`+method+`","`+auditlog.FieldURL+`":"`+url+`","`+auditlog.FieldUserAgent+`":"`+cr.ua+`"`...)
	if g.rng.IntN(100) < 2 { // not proxied: no decision of ours
		b = append(b, `,"`+auditlog.FieldDecision+`":"`+auditlog.DecisionNone+`","`+auditlog.FieldReason+`":"`+auditlog.ReasonNotProxied+`","`+auditlog.FieldStatus+`":502,"`+auditlog.FieldBytes+`":0,"`+auditlog.FieldDurationMS+`":0.4`...)
		return g.finish(b, ts, h, "")
	}
	decision, reason, rule, access, status := g.decide(ts, h, path, connect)
	enforced := !(decision == auditlog.DecisionDeny && cr.reportOnly && reason != auditlog.ReasonHostDenied)
	if decision == auditlog.DecisionDeny && enforced {
		status = 403
	}
	b = append(b, `,"`+auditlog.FieldDecision+`":"`+decision+`","`+auditlog.FieldReason+`":"`+reason+`","`+auditlog.FieldToken+`":"`+cr.token+`","`+auditlog.FieldTokenSource+`":"`+cr.source+`","`+auditlog.FieldCandidates+`":["`+cr.token+`"],"`+auditlog.FieldRobotsURL+`":"https://`+host+`/robots.txt"`...)
	if cr.source == "credentials" {
		b = append(b, `,"`+auditlog.FieldUser+`":"`+cr.token+`-crawl"`...)
	}
	if access == auditlog.AccessSuccessful {
		b = append(b, `,"`+auditlog.FieldGroup+`":"*","`+auditlog.FieldFallback+`":true`...)
	}
	if rule >= 0 {
		b = append(b, `,"`+auditlog.FieldRule+`":"`+rules[rule].text+`","`+auditlog.FieldRuleLine+`":`...)
		b = strconv.AppendInt(b, int64(rules[rule].line), 10)
	}
	if access != "" {
		rs := "200"
		switch access {
		case auditlog.AccessUnavailable:
			rs = "404"
		case auditlog.AccessUnreachable:
			rs = "503"
		}
		b = append(b, `,"`+auditlog.FieldAccess+`":"`+access+`","`+auditlog.FieldRobotsStatus+`":`+rs+`,"`+auditlog.FieldCache+`":"hit"`...)
	}
	if access == auditlog.AccessUnreachable {
		b = append(b, `,"`+auditlog.FieldError+`":"robots.txt: 503 Service Unavailable"`...)
	}
	if connect {
		b = append(b, `,"`+auditlog.FieldTunnel+`":"intercept"`...)
	}
	b = append(b, `,"`+auditlog.FieldStatus+`":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"`+auditlog.FieldBytes+`":`...)
	b = strconv.AppendInt(b, int64(g.rng.IntN(200000)), 10)
	b = append(b, `,"`+auditlog.FieldDurationMS+`":`...)
	b = strconv.AppendFloat(b, float64(g.rng.IntN(900000))/1000, 'f', 3, 64)
	return g.finish(b, ts, h, strconv.FormatBool(enforced))
}

// decide makes the request's decision: unreachable during the host's
// spells (one starts on about one line in 2,000 of a host), robots.txt
// unavailable for one host in 30, else the first matching rule.
func (g *gen) decide(ts int64, h int, path string, connect bool) (decision, reason string, rule int, access string, status int) {
	if g.rng.IntN(2000) == 0 {
		g.down[h] = ts + int64(600+g.rng.IntN(3000))
	}
	switch {
	case g.rng.IntN(200) == 0:
		return auditlog.DecisionDeny, auditlog.ReasonHostDenied, -1, "", 403
	case connect:
		return auditlog.DecisionAllow, auditlog.ReasonIntercept, -1, "", 200
	case ts < g.down[h]:
		return auditlog.DecisionDeny, auditlog.AccessUnreachable, -1, auditlog.AccessUnreachable, 200
	case h%30 == 7:
		return auditlog.DecisionAllow, auditlog.AccessUnavailable, -1, auditlog.AccessUnavailable, 200
	}
	for i, r := range rules {
		if p := strings.TrimPrefix(strings.TrimPrefix(r.text, "Allow: "), "Disallow: "); strings.HasPrefix(path, p) && p != "/" {
			if r.allow {
				return auditlog.DecisionAllow, auditlog.ReasonRule, i, auditlog.AccessSuccessful, 200
			}
			return auditlog.DecisionDeny, auditlog.ReasonRule, i, auditlog.AccessSuccessful, 200
		}
	}
	return auditlog.DecisionAllow, auditlog.ReasonNoMatch, -1, auditlog.AccessSuccessful, 200
}

// finish adds enforced (when not empty) and the robots.txt version, closes
// the line, and adds the chain's "prev" with audit.AppendPrev.
func (g *gen) finish(b []byte, ts int64, h int, enforced string) []byte {
	if enforced != "" {
		b = append(b, `,"`+auditlog.FieldEnforced+`":`+enforced...)
	}
	version := ts / int64(86400*(1+h%3))
	b = append(b, `,"`+auditlog.FieldRobotsSHA256+`":"`...)
	b = appendFakeSHA(b, uint64(h)<<20^uint64(version))
	b = append(b, `","`+auditlog.FieldRobotsFetchedAt+`":"`...)
	b = time.Unix(ts-int64(h%3600), 0).UTC().AppendFormat(b, time.RFC3339)
	b = append(b, "\"}\n"...)
	g.buf = b
	if !g.c.Chain {
		return b
	}
	g.chained = audit.AppendPrev(g.chained[:0], b, g.prev)
	g.prev = sha256.Sum256(g.chained)
	return g.chained
}

// appendFakeSHA appends 64 hex digits derived from x: it looks like a
// SHA-256 and costs far less.
func appendFakeSHA(b []byte, x uint64) []byte {
	for i := range 4 {
		x ^= x >> 31
		x *= 0x9e3779b97f4a7c15 + uint64(i)
		x ^= x >> 29
		b = append(b, hexDigits16(x)...)
	}
	return b
}

func hexDigits16(x uint64) string {
	const d = "0123456789abcdef"
	var s [16]byte
	for i := 15; i >= 0; i-- {
		s[i] = d[x&15]
		x >>= 4
	}
	return string(s[:])
}
