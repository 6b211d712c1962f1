package loggen

import (
	"crypto/sha256"
	"strconv"
	"strings"
	"time"

	"github.com/robotsproxy/robotsproxy/audit"
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
	b = append(b, `{"time":"`...)
	b = g.t.UTC().AppendFormat(b, time.RFC3339)
	b = append(b, `","client":"10.0.`...)
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
	b = append(b, `","method":"`+method+`","url":"`+url+`","user_agent":"`+cr.ua+`"`...)
	if g.rng.IntN(100) < 2 { // not proxied: no decision of ours
		b = append(b, `,"decision":"none","reason":"not-proxied","status":502,"bytes":0,"duration_ms":0.4`...)
		return g.finish(b, ts, h, "")
	}
	decision, reason, rule, access, status := g.decide(ts, h, path, connect)
	enforced := !(decision == "deny" && cr.reportOnly && reason != "host-denied")
	if decision == "deny" && enforced {
		status = 403
	}
	b = append(b, `,"decision":"`+decision+`","reason":"`+reason+`","product_token":"`+cr.token+`","token_source":"`+cr.source+`","candidates":["`+cr.token+`"],"robots_url":"https://`+host+`/robots.txt"`...)
	if cr.source == "credentials" {
		b = append(b, `,"user":"`+cr.token+`-crawl"`...)
	}
	if access == "successful" {
		b = append(b, `,"group":"*","star_fallback":true`...)
	}
	if rule >= 0 {
		b = append(b, `,"rule":"`+rules[rule].text+`","rule_line":`...)
		b = strconv.AppendInt(b, int64(rules[rule].line), 10)
	}
	if access != "" {
		rs := "200"
		switch access {
		case "unavailable":
			rs = "404"
		case "unreachable":
			rs = "503"
		}
		b = append(b, `,"access_result":"`+access+`","robots_status":`+rs+`,"cache":"hit"`...)
	}
	if access == "unreachable" {
		b = append(b, `,"error":"robots.txt: 503 Service Unavailable"`...)
	}
	if connect {
		b = append(b, `,"tunnel":"intercept"`...)
	}
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(g.rng.IntN(200000)), 10)
	b = append(b, `,"duration_ms":`...)
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
		return "deny", "host-denied", -1, "", 403
	case connect:
		return "allow", "intercept", -1, "", 200
	case ts < g.down[h]:
		return "deny", "unreachable", -1, "unreachable", 200
	case h%30 == 7:
		return "allow", "unavailable", -1, "unavailable", 200
	}
	for i, r := range rules {
		if p := strings.TrimPrefix(strings.TrimPrefix(r.text, "Allow: "), "Disallow: "); strings.HasPrefix(path, p) && p != "/" {
			if r.allow {
				return "allow", "rule", i, "successful", 200
			}
			return "deny", "rule", i, "successful", 200
		}
	}
	return "allow", "no-matching-rule", -1, "successful", 200
}

// finish adds enforced (when not empty) and the robots.txt version, closes
// the line, and adds the chain's "prev" with audit.AppendPrev.
func (g *gen) finish(b []byte, ts int64, h int, enforced string) []byte {
	if enforced != "" {
		b = append(b, `,"enforced":`+enforced...)
	}
	version := ts / int64(86400*(1+h%3))
	b = append(b, `,"robots_sha256":"`...)
	b = appendFakeSHA(b, uint64(h)<<20^uint64(version))
	b = append(b, `","robots_fetched_at":"`...)
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
