package policy_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/robots"
)

// TestOwnRefusals: the refusals a proxy makes before robots.txt is read
// are the policy's decisions: denied, enforced, with the request's
// identity (its pin first), the reason, an error that names the limit, and
// the words the refusal's body says.
func TestOwnRefusals(t *testing.T) {
	p, _ := newStubPolicy("", policy.Options{})
	ua := policy.Request{UserAgent: "ExampleBot/1.0"}
	pinned := policy.Request{UserAgent: "ExampleBot/1.0", Pin: policy.Pin{Token: "PinnedBot", Source: policy.SourceClientRange}}
	for _, tt := range []struct {
		name      string
		d         policy.Decision
		reason    policy.Reason
		token     string
		err, text string
	}{
		{"target too long", p.DecideTargetTooLong(ua, 9000, 8192), auditlog.ReasonURITooLong, "ExampleBot",
			"the request target is 9000 octets, longer than the limit of 8192 (client.max_request_target_bytes)",
			"robotsproxy: request refused (uri-too-long): the request target is 9000 octets"},
		{"header too large, pinned", p.DecideHeaderTooLarge(pinned, 40000, 32768, 4096), auditlog.ReasonHeaderTooLarge, "PinnedBot",
			"the request line and headers are 40000 octets, over the limit of 32768 (client.max_header_bytes) and its 4096 octets of slack",
			"robotsproxy: request refused (header-too-large): the request line and headers are 40000 octets"},
		{"audit unavailable", p.DecideAuditUnavailable(ua), auditlog.ReasonAuditUnavailable, "ExampleBot",
			"the audit log cannot be written (audit.on_write_error: refuse)",
			"robotsproxy: the audit log cannot be written, so the request was not forwarded; retry later\n"},
		{"CONNECT inside a tunnel", p.DecideConnect(context.Background(), policy.Request{Host: "example.com:443", UserAgent: "ExampleBot/1.0",
			Tunnel: "example.com:443"}, true), auditlog.ReasonBadRequest, "ExampleBot",
			"CONNECT inside an intercepted tunnel: send the requests themselves",
			"robotsproxy: request refused (bad-request): CONNECT inside an intercepted tunnel"},
	} {
		d := tt.d
		if d.Allowed || d.ReportOnly || d.Reason != tt.reason || d.Identity.Token != tt.token || d.Err == nil || d.Err.Error() != tt.err {
			t.Errorf("%s: got allowed %v, report-only %v, reason %q, token %q, error %v; want a denial, %q, %q, %q",
				tt.name, d.Allowed, d.ReportOnly, d.Reason, d.Identity.Token, d.Err, tt.reason, tt.token, tt.err)
		}
		if got := d.Text(0); !strings.HasPrefix(got, tt.text) || !strings.HasSuffix(got, "\n") {
			t.Errorf("%s: Text = %q, want a line starting %q", tt.name, got, tt.text)
		}
	}
}

// TestDecisionsTheProxyTurns: a decision being forwarded becomes a
// refusal, enforced whatever the mode, when the proxy shuts down, when the
// dial-time guard refuses the address, or when the target it allowed
// cannot be read again.
func TestDecisionsTheProxyTurns(t *testing.T) {
	forwarded := func() policy.Decision {
		return policy.Decision{Allowed: false, ReportOnly: true, Reason: auditlog.ReasonRule,
			Identity: policy.Identity{Token: "ExampleBot"}, RobotsURL: "https://example.com/robots.txt"}
	}
	refused := errors.New("dial tcp 10.0.0.1:443: destination address refused")
	for _, tt := range []struct {
		name   string
		turn   func(*policy.Decision)
		reason policy.Reason
		err    error
		robots string // RobotsURL kept
	}{
		{"shutdown", policy.DecideShutdown, auditlog.ReasonShutdown, nil, "https://example.com/robots.txt"},
		{"dial refused", func(d *policy.Decision) { policy.DecideDialRefused(d, refused) }, auditlog.ReasonDestination, refused, "https://example.com/robots.txt"},
		{"bad target", func(d *policy.Decision) { policy.DecideBadTarget(d, refused) }, auditlog.ReasonBadRequest, refused, ""},
	} {
		d := forwarded()
		tt.turn(&d)
		if d.Allowed || d.ReportOnly || d.Reason != tt.reason || d.Err != tt.err || d.Identity.Token != "ExampleBot" || d.RobotsURL != tt.robots {
			t.Errorf("%s: got %+v; want an enforced denial, reason %q, error %v, token ExampleBot, robots.txt %q", tt.name, d, tt.reason, tt.err, tt.robots)
		}
	}
}

// ticket is a policy.Ticket that records its release.
type ticket struct {
	answer   policy.Admission
	released int
}

func (t *ticket) Answer() *policy.Admission { return &t.answer }
func (t *ticket) Release()                  { t.released++ }
func (t *ticket) Paced() bool               { return false }
func (t *ticket) Sending() error            { return nil }
func (t *ticket) SendingUnreported() error  { return nil }
func (t *ticket) Wrote()                    {}

// politeness is a policy.Politeness that answers every request with
// answer, and records what it was asked and told.
type politeness struct {
	answer   policy.Admission
	asked    []policy.PolitenessRequest
	observed []string // "status retry-after date", one per Observe
	ctxErr   error    // the context's error when Observe was called
}

func (p *politeness) Admit(_ context.Context, r policy.PolitenessRequest) policy.Ticket {
	p.asked = append(p.asked, r)
	return &ticket{answer: p.answer}
}

func (p *politeness) Observe(ctx context.Context, _ policy.Ticket, status int, retryAfter, date string) error {
	p.observed = append(p.observed, strings.Join([]string{http.StatusText(status), retryAfter, date}, " "))
	p.ctxErr = ctx.Err()
	return nil
}

// TestAdmit: admission asks Options.Politeness by the decision's product
// token, site and crawl delay, and records its answer in the decision: a
// wait's cause becomes the reason (robots.txt's moves to RobotsReason), a
// refusal denies, enforced. Without politeness every request goes at once.
func TestAdmit(t *testing.T) {
	allowed := func() policy.Decision {
		return policy.Decision{Allowed: true, Reason: auditlog.ReasonNoMatch, Identity: policy.Identity{Token: "ExampleBot"},
			RobotsURL: "https://example.com/robots.txt", CrawlDelay: 2 * time.Second, HasCrawlDelay: true}
	}
	none, _ := newStubPolicy("", policy.Options{})
	d := allowed()
	if tk, ok := none.Admit(context.Background(), &d); tk != nil || !ok || d.Reason != auditlog.ReasonNoMatch {
		t.Errorf("without politeness: got ticket %v, %v, reason %q; want none, true, unchanged", tk, ok, d.Reason)
	}
	for _, tt := range []struct {
		name   string
		answer policy.Admission
		ok     bool
		reason policy.Reason
	}{
		{"at once", policy.Admission{}, true, auditlog.ReasonNoMatch},
		{"after a wait", policy.Admission{Waited: time.Second, WaitCause: auditlog.ReasonCrawlDelay}, true, auditlog.ReasonCrawlDelay},
		{"refused", policy.Admission{Refused: auditlog.ReasonBackoff, RetryAfter: 3 * time.Second}, false, auditlog.ReasonBackoff},
	} {
		pol := &politeness{answer: tt.answer}
		p, _ := newStubPolicy("", policy.Options{Politeness: pol})
		d := allowed()
		tk, ok := p.Admit(context.Background(), &d)
		want := policy.PolitenessRequest{Key: policy.PolitenessKey{Token: "ExampleBot", Authority: "https://example.com"},
			Delay: 2 * time.Second, HasDelay: true}
		if len(pol.asked) != 1 || pol.asked[0] != want {
			t.Errorf("%s: politeness asked %+v, want %+v", tt.name, pol.asked, want)
		}
		if tk == nil || *tk.Answer() != tt.answer || ok != tt.ok || d.Reason != tt.reason || d.Allowed != tt.ok {
			t.Errorf("%s: got ticket %v, %v, reason %q, allowed %v; want the ticket, %v, %q", tt.name, tk, ok, d.Reason, d.Allowed, tt.ok, tt.reason)
		}
		if tt.reason != auditlog.ReasonNoMatch && d.RobotsReason != auditlog.ReasonNoMatch {
			t.Errorf("%s: RobotsReason %q, want robots.txt's, %q", tt.name, d.RobotsReason, auditlog.ReasonNoMatch)
		}
		if !ok && (d.RetryAfter != 3*time.Second || d.RetryAfterSeconds() != 3) {
			t.Errorf("%s: RetryAfter %v, want 3s", tt.name, d.RetryAfter)
		}
	}
}

// licenses is a policy.Licenses that remembers what Observe tells it.
type licenses struct{ remembered map[string]string }

func (l *licenses) Check(context.Context, *robots.Robots, string, string, []string) *policy.License {
	return nil
}

func (l *licenses) CheckLink(context.Context, string, string, string, []string) *policy.License {
	return nil
}

func (l *licenses) RememberLink(resource, url string) { l.remembered[resource] = url }

// TestObserve: the origin's answer goes to politeness (with a context the
// client's leaving does not cancel), its Content-Usage preferences are
// added to the decision's usage, and a Link naming an RSL license is
// recorded and remembered for the resource when purposes are declared.
func TestObserve(t *testing.T) {
	pol, lic := &politeness{}, &licenses{remembered: map[string]string{}}
	p, _ := newStubPolicy("", policy.Options{Politeness: pol, Usage: policy.UsageOptions{Licenses: lic}})
	d := policy.Decision{Allowed: true, RobotsURL: "https://example.com/robots.txt", Robots: robots.Parse(nil),
		Usage: &policy.Usage{Purposes: []string{policy.PurposeTrainAI}}}
	req := &http.Request{Method: "GET", RequestURI: "https://example.com/docs/a?x=1", URL: mustURL(t, "https://example.com/docs/a?x=1")}
	resp := &http.Response{StatusCode: http.StatusTooManyRequests, Request: req, Header: http.Header{
		"Retry-After":   {"30"},
		"Content-Usage": {"train-ai=n"},
		"Link":          {`</license.xml>; rel="license"; type="application/rsl+xml"`},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client has gone
	p.Observe(ctx, &d, &ticket{}, req, resp)
	if len(pol.observed) != 1 || pol.observed[0] != "Too Many Requests 30 " || pol.ctxErr != nil {
		t.Errorf("politeness observed %q (context error %v), want one 429 with Retry-After 30, uncancelled", pol.observed, pol.ctxErr)
	}
	if v, _, ok := d.Usage.Prefs.Get(policy.PurposeTrainAI); !ok || v != policy.UsageNo {
		t.Errorf("usage preferences %+v, want train-ai=n from the header", d.Usage.Prefs)
	}
	if d.Usage.LicenseLink != "https://example.com/license.xml" {
		t.Errorf("LicenseLink %q, want https://example.com/license.xml", d.Usage.LicenseLink)
	}
	if got := lic.remembered["https://example.com/docs/a?x=1"]; got != "https://example.com/license.xml" {
		t.Errorf("remembered %q, want the license for the resource https://example.com/docs/a?x=1", lic.remembered)
	}
	p.Observe(context.Background(), &d, nil, req, &http.Response{StatusCode: 200, Request: req, Header: http.Header{}})
	if len(pol.observed) != 1 {
		t.Errorf("a request without a ticket was observed by politeness: %q", pol.observed)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
