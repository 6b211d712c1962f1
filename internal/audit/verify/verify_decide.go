package verify

import (
	"errors"
	"fmt"
	"os"
	"time"
	"unicode/utf8"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/memo"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// decider re-decides decision lines from the archive. It caches what it
// reads: the listing of each day folder of the archive, the fetch records
// of each (robots_url, robots_fetched_at), what is known of each body, and
// each body compiled with the options of its fetch, so that a log of many
// lines per robots.txt costs one parse per file. A body's octets are not
// kept once compiled. Each cache is bounded (see cacheBounds).
type decider struct {
	dir      string
	readDir  func(string) ([]os.DirEntry, error)     // os.ReadDir
	now      func() time.Time                        // time.Now
	days     *memo.Memo[string, dayListing]          // "records/DAY"
	fetches  *memo.Memo[string, []audit.FetchRecord] // robots_url NUL robots_fetched_at
	bodies   *memo.Memo[string, bodyEntry]           // hex SHA-256
	compiled *memo.Memo[compiledKey, *robots.Robots] // sized by Robots.Size
	// exempt tests a target against the configuration's exempt hosts
	// (policy.Exemptions); nil when no configuration was given.
	exempt func(scheme, hostport string) (bool, error)
}

// bodyEntry is what the decider keeps of one archived body: not its
// octets, which are read, compiled and dropped.
type bodyEntry struct {
	plain bool  // UTF-8 and at most minLimit octets: parses the same under any options
	err   error // wraps audit.ErrNotArchived or audit.ErrAltered
}

// compiledKey names a body parsed with the options of one fetch.
type compiledKey struct {
	sha     string
	charset string
	limit   int
}

// minLimit is the smallest parse limit there is (RFC 9309 2.5: 500 KiB):
// a UTF-8 body no longer parses the same under any limit and charset.
const minLimit = 500 << 10

func newDecider(dir string, max cacheBounds) *decider {
	return &decider{dir: dir, readDir: os.ReadDir, now: time.Now,
		days:    memo.New[string, dayListing](max.days),
		fetches: memo.New[string, []audit.FetchRecord](max.fetches),
		bodies:  memo.New[string, bodyEntry](max.bodies),
		compiled: memo.NewSized[compiledKey](max.compiled, int64(max.octets),
			func(r *robots.Robots) int64 { return int64(r.Size) })}
}

// check re-decides one decision line (see isDecision). It returns "" when
// the line verifies, else the kind of problem and why. The error is an I/O
// error reading the archive.
func (d *decider) check(l *auditLine) (Kind, string, error) {
	switch policy.Reason(l.Reason) {
	case auditlog.ReasonCrawlDelay, auditlog.ReasonBackoff, auditlog.ReasonHostConcurrency:
		return d.checkPolite(l)
	case auditlog.ReasonUsage:
		return d.checkUsage(l)
	case auditlog.ReasonLicense, auditlog.ReasonLicenseRequired:
		return d.checkLicense(l)
	case auditlog.ReasonRule, auditlog.ReasonNoMatch, auditlog.ReasonUnavailable, auditlog.ReasonUnreachable,
		auditlog.ReasonDestination, auditlog.ReasonImplicit, auditlog.ReasonOverride:
	default:
		return KindDecision, fmt.Sprintf("decision %s with reason %s, which never allows a request", l.Decision, l.Reason), nil
	}
	dec, from, k, msg, err := d.redecide(l, l.Reason)
	if k != "" || err != nil {
		return k, msg, err
	}
	if want := outcomeOf(dec); !l.same(want) {
		return KindDecision, fmt.Sprintf("logged %s, but %s gives %s", l.logged(), from, want), nil
	}
	return "", "", nil
}

// checkPolite checks a line whose reason is politeness's (crawl-delay,
// backoff, host-concurrency): the robots.txt decision behind it, named by
// robots_reason, is re-decided. A request politeness held keeps that
// decision; one it refused is denied whatever robots.txt said, so a
// denial needs only robots_reason to be right.
func (d *decider) checkPolite(l *auditLine) (Kind, string, error) {
	switch policy.Reason(l.RobotsReason) {
	case "":
		return KindDecision, fmt.Sprintf("reason %s without robots_reason: the robots.txt decision behind it is not named", l.Reason), nil
	case auditlog.ReasonCrawlDelay, auditlog.ReasonBackoff, auditlog.ReasonHostConcurrency, auditlog.ReasonUsage,
		auditlog.ReasonLicense, auditlog.ReasonLicenseRequired:
		return KindDecision, fmt.Sprintf("robots_reason %s is not a robots.txt decision", l.RobotsReason), nil
	}
	c := *l
	c.Reason = l.RobotsReason
	dec, from, k, msg, err := d.redecide(&c, c.Reason)
	if k != "" || err != nil {
		return k, msg, err
	}
	// Politeness's answer as the line reports it, decided as the proxy
	// decides it: a request robots.txt allows is denied only by a
	// refusal; any other was held for its turn.
	a := &policy.Admission{Waited: 1, WaitCause: policy.Reason(l.Reason)}
	if l.Decision == "deny" && dec.Allowed {
		a = &policy.Admission{Refused: policy.Reason(l.Reason)}
	}
	policy.DecideAdmission(&dec, a)
	want := outcomeOf(dec)
	want.reason = string(dec.RobotsReason) // compared with c, under robots_reason
	if !c.same(want) {
		return KindDecision, fmt.Sprintf("logged %s under reason %s, but %s gives %s", c.logged(), l.Reason, from, want), nil
	}
	return "", "", nil
}

// checkUsage checks a usage-preference line: robots.txt's own decision,
// re-decided, allows the request (a usage preference denies only what
// robots.txt allows) with the logged group and rule, and the preferences
// it states refuse the line's usage_refused, the first refused of the
// purposes it declares.
func (d *decider) checkUsage(l *auditLine) (Kind, string, error) {
	if l.Decision != "deny" || l.Access != string(policy.Successful) || l.UsageRefused == "" {
		return KindDecision, fmt.Sprintf("reason %s needs decision deny, access_result successful and usage_refused; the line has %s, %q, %q",
			l.Reason, l.Decision, l.Access, l.UsageRefused), nil
	}
	dec, from, k, msg, err := d.redecideBefore(l, "the usage preference")
	if k != "" || err != nil {
		return k, msg, err
	}
	policy.DecideUsage(&dec, l.Purposes, true) // as the proxy decides it, enforced
	if dec.Usage.Refused != l.UsageRefused {
		return KindDecision, fmt.Sprintf("usage_refused %q, but for the purposes %q %s refuses %q", l.UsageRefused, l.Purposes, from, dec.Usage.Refused), nil
	}
	return "", "", nil
}

// redecideBefore re-decides line l as robots.txt alone decides it, before
// a refinement (what: "the usage preference", "the license") denied it:
// robots.txt must allow the request with the logged group and rule. It
// returns that decision and what decided it, or the problem (KindDecision
// when robots.txt decides otherwise).
func (d *decider) redecideBefore(l *auditLine, what string) (dec policy.Decision, from string, k Kind, msg string, err error) {
	c := *l
	dec, from, k, msg, err = d.redecide(&c, "")
	if k != "" || err != nil {
		return dec, from, k, msg, err
	}
	want := outcomeOf(dec)
	c.Reason, c.Decision = want.reason, "allow"
	if !dec.Allowed || !c.same(want) {
		return dec, from, KindDecision, fmt.Sprintf("logged %s (before %s), but %s gives %s", c.logged(), what, from, want), nil
	}
	return dec, from, "", "", nil
}

// redecide returns the decision the proxy makes for line l as robots.txt
// and the configuration decide it, where reason is the line's reason (or
// its robots_reason), "" for any reason a successful access gives; from
// says what decided, for messages. Otherwise it returns the problem that
// prevents re-deciding; the error is an I/O error reading the archive.
func (d *decider) redecide(l *auditLine, reason string) (dec policy.Decision, from string, k Kind, msg string, err error) {
	switch policy.Reason(reason) {
	case auditlog.ReasonImplicit:
		// RFC 9309 2.2.2: no robots.txt is read for /robots.txt.
		if l.URLTruncated {
			return dec, "", KindUnverifiable, "url was cut short in the log (url_truncated)", nil
		}
		return policy.DecideAccess(nil, l.path(), l.Candidates), fmt.Sprintf("the path %q (implicitly allowed only when every reading of it names /robots.txt)", l.path()), "", "", nil
	case auditlog.ReasonOverride:
		return d.override(l)
	}
	if k, msg := l.checkAccess(reason); k != "" {
		return dec, "", k, msg, nil
	}
	switch {
	case d.dir == "":
		return dec, "", KindUnverifiable, "no robots.txt archive given (-archive)", nil
	case l.RobotsURLTruncated:
		return dec, "", KindUnverifiable, "robots_url was cut short in the log", nil
	}
	if k, msg := l.checkRobotsURL(); k != "" {
		return dec, "", k, msg, nil
	}
	switch {
	case l.RobotsFetchedAt == "" && l.Access != string(policy.Successful):
		return dec, "", KindUnverifiable, "no robots_fetched_at: the fetch cannot be found in the archive", nil
	}
	recs, msg, err := d.records(l)
	if err != nil || msg != "" {
		return dec, "", KindUnverifiable, msg, err
	}
	if l.Access != string(policy.Successful) {
		return d.redecideNoBody(l, recs)
	}
	return d.redecideBody(l, recs)
}

// override re-decides a line with reason override: its host must be one
// of the configuration's exempt hosts (see VerifyOptions.ExemptHosts).
func (d *decider) override(l *auditLine) (dec policy.Decision, from string, k Kind, msg string, err error) {
	if d.exempt == nil {
		return dec, "", KindUnverifiable, "reason override: no configuration given (-config) to check exempt_hosts against", nil
	}
	if l.URLTruncated {
		return dec, "", KindUnverifiable, "url was cut short in the log (url_truncated)", nil
	}
	scheme, host, ok := l.target()
	exempt, aerr := d.exempt(scheme, host)
	if !ok || aerr != nil {
		return dec, "", KindDecision, fmt.Sprintf("reason override, but url %q names no host robots.txt covers", l.URL), nil
	}
	from = "the configuration's exempt_hosts"
	if !exempt {
		return dec, from, KindDecision, fmt.Sprintf("reason override, but %s is not in %s", host, from), nil
	}
	dec.Allowed, dec.Reason = true, auditlog.ReasonOverride
	return dec, from, "", "", nil
}

// records returns the archive's records of the fetch the line names (none
// when it names no time); msg says why they cannot be looked up.
func (d *decider) records(l *auditLine) (recs []audit.FetchRecord, msg string, err error) {
	if l.RobotsFetchedAt == "" {
		return nil, "", nil
	}
	key := l.RobotsURL + "\x00" + l.RobotsFetchedAt
	if recs, ok := d.fetches.Get(key); ok {
		return recs, "", nil
	}
	t, err := time.Parse(time.RFC3339Nano, l.RobotsFetchedAt)
	if err != nil {
		return nil, fmt.Sprintf("robots_fetched_at %q is not RFC 3339", l.RobotsFetchedAt), nil
	}
	names, err := d.findRecords(l.RobotsURL, t)
	if err != nil {
		return nil, "", err
	}
	for _, n := range names {
		rec, err := audit.ReadRecord(d.dir, n)
		if err != nil {
			return nil, "", err
		}
		if rec.URL == l.RobotsURL {
			recs = append(recs, rec)
		}
	}
	d.fetches.Put(key, recs)
	return recs, "", nil
}

// redecideNoBody re-decides an unavailable or unreachable line from the
// archive's record of its fetch.
func (d *decider) redecideNoBody(l *auditLine, recs []audit.FetchRecord) (dec policy.Decision, from string, k Kind, msg string, err error) {
	var rec *audit.FetchRecord
	for i := range recs {
		if recs[i].SHA256 == "" {
			rec = &recs[i]
			break
		}
	}
	switch {
	case rec == nil && len(recs) > 0:
		return dec, "", KindDecision, fmt.Sprintf("the archive's fetch of %s at %s read a body (sha256 %s): it was %s, not %s",
			l.RobotsURL, l.RobotsFetchedAt, recs[0].SHA256, recs[0].Result, l.Access), nil
	case rec == nil:
		return dec, "", KindUnverifiable, fmt.Sprintf("no fetch record of %s at %s in the archive (pruned, or fetched while the archive was off)", l.RobotsURL, l.RobotsFetchedAt), nil
	}
	if k, msg := l.against(rec); k != "" {
		return dec, "", k, msg, nil
	}
	dec = policy.DecideAccess(&policy.Access{Result: policy.AccessResult(rec.Result), Status: rec.Status, Refused: rec.Refused}, l.path(), l.Candidates)
	return dec, fmt.Sprintf("the archived fetch (%s, status %d)", rec.Result, rec.Status), "", "", nil
}

// against checks the line's access result and robots.txt status against
// the archive's record of its fetch.
func (l *auditLine) against(rec *audit.FetchRecord) (Kind, string) {
	switch {
	case string(rec.Result) != l.Access:
		return KindDecision, fmt.Sprintf("access_result %s, but the archive's fetch of %s at %s was %s", l.Access, l.RobotsURL, l.RobotsFetchedAt, rec.Result)
	case l.RobotsStatus != nil && *l.RobotsStatus != rec.Status:
		return KindDecision, fmt.Sprintf("robots_status %d, but the archive's fetch of %s at %s had status %d", *l.RobotsStatus, l.RobotsURL, l.RobotsFetchedAt, rec.Status)
	}
	return "", ""
}

// redecideBody re-decides a line whose robots.txt was fetched successfully
// from the archived body.
func (d *decider) redecideBody(l *auditLine, recs []audit.FetchRecord) (dec policy.Decision, from string, k Kind, msg string, err error) {
	sha := l.RobotsSHA256
	switch {
	case sha == "":
		return dec, "", KindUnverifiable, "no robots_sha256: the robots.txt body is not named", nil
	case l.URLTruncated:
		return dec, "", KindUnverifiable, "url was cut short in the log (url_truncated)", nil
	case l.CandidatesTruncated:
		return dec, "", KindUnverifiable, "candidates were cut short in the log (candidates_truncated)", nil
	}
	var rec *audit.FetchRecord
	for i := range recs {
		if recs[i].SHA256 == sha {
			rec = &recs[i]
		}
	}
	if rec == nil && len(recs) > 0 {
		return dec, "", KindDecision, fmt.Sprintf("robots_sha256 %s, but the archive's fetch of %s at %s read body %s", sha, l.RobotsURL, l.RobotsFetchedAt, audit.BodyOrNone(recs[0].SHA256)), nil
	}
	if rec != nil {
		if k, msg := l.against(rec); k != "" {
			return dec, "", k, msg, nil
		}
	}
	r, k, msg, err := d.compile(sha, rec)
	if r == nil {
		return dec, "", k, msg, err
	}
	dec = policy.DecideAccess(&policy.Access{Result: policy.Successful, Robots: r}, l.path(), l.Candidates)
	return dec, fmt.Sprintf("robots.txt %.16s…", sha), "", "", nil
}

// compile returns the body sha parsed as the fetch rec parsed it. Without
// a record the body is parsed with the defaults when no option can change
// how it parses (UTF-8, at most 500 KiB); otherwise the line is
// unverifiable. A nil result comes with the problem.
func (d *decider) compile(sha string, rec *audit.FetchRecord) (*robots.Robots, Kind, string, error) {
	var body []byte
	b, read := d.bodies.Get(sha)
	if !read {
		body, b = d.readBody(sha)
	}
	if b.err != nil {
		return bodyProblem(sha, b.err)
	}
	var o robots.Options
	switch {
	case rec != nil:
		o = robots.Options{MaxBytes: rec.ParseLimit, Charset: access.DeclaredCharset(rec.Header)}
	case !b.plain:
		return nil, KindUnverifiable, fmt.Sprintf("no fetch record with body %.16s…, and how this body parses depends on the charset and parse limit of the fetch", sha), nil
	}
	key := compiledKey{sha: sha, charset: o.Charset, limit: o.Limit()}
	if r, ok := d.compiled.Get(key); ok {
		return r, "", "", nil
	}
	if read { // read before, and dropped: read it again
		if body, b = d.readBody(sha); b.err != nil {
			return bodyProblem(sha, b.err)
		}
	}
	r := o.Parse(body)
	d.compiled.Put(key, r)
	return r, "", "", nil
}

// readBody reads the body sha from the archive and caches what is known
// of it, not its octets.
func (d *decider) readBody(sha string) ([]byte, bodyEntry) {
	body, err := audit.ReadBody(d.dir, sha)
	b := bodyEntry{err: err, plain: err == nil && len(body) <= minLimit && utf8.Valid(body)}
	d.bodies.Put(sha, b)
	return body, b
}

// bodyProblem turns a ReadBody error into the line's problem, or the I/O
// error.
func bodyProblem(sha string, err error) (*robots.Robots, Kind, string, error) {
	switch {
	case errors.Is(err, audit.ErrNotArchived):
		return nil, KindUnverifiable, fmt.Sprintf("no archived body %s (pruned, or fetched while the archive was off)", sha), nil
	case errors.Is(err, audit.ErrAltered):
		return nil, KindAltered, err.Error(), nil
	}
	return nil, "", "", err
}
