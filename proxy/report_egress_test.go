package proxy_test

import (
	"crypto/rand"
	"io"
	"net/http"
	"net/netip"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/egress"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments"
	"github.com/robotsproxy/robotsproxy/internal/egress/payments/paytest"
	"github.com/robotsproxy/robotsproxy/internal/egress/signing"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// signAndPay returns the egress steps as the server chains them (paying
// around signing around the transport) for ExampleBot: a new key, and a
// budget of 1 USD a day at most 0.05 a request.
func signAndPay(t *testing.T) func(*proxy.Options) {
	t.Helper()
	k, err := signing.GenerateKeyDir(filepath.Join(t.TempDir(), "k"), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	a := &signing.Agent{Keys: []*signing.Key{k}, Active: k, URL: "https://crawler.example"}
	s := &signing.Settings{Agents: egress.Table[*signing.Agent]{Tokens: map[string]*signing.Agent{"examplebot": a}}, All: []*signing.Agent{a}}
	limits := &egress.Table[payments.Limit]{Tokens: map[string]payments.Limit{"examplebot": {
		Budget: "token:examplebot", Currency: "USD", MaxPrice: 50_000, PerDay: 1_000_000}}}
	return func(o *proxy.Options) {
		o.Egress = &payments.Transport{Next: signing.NewTransport(o.Transport, s), Limits: limits, Ledger: &payments.Local{}}
	}
}

// TestReportOnlyNeitherSignedNorPaid: a request denied and forwarded only
// because the mode is report (from the global mode, a user, a client
// range; for robots.txt, a usage preference or a license; held by
// politeness first; plain or inside an intercepted tunnel) reaches the
// origin unsigned, its 402 is not paid (no paid retry goes out) and passed
// on without X-Robotsproxy-Not-Paid, and its audit line says
// egress_skipped and not_paid report-only. An allowed request through the
// same proxy is signed and paid.
func TestReportOnlyNeitherSignedNorPaid(t *testing.T) {
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	pinner := func(users []identity.User, ranges []identity.ClientRange) func(*policy.Options) {
		return func(po *policy.Options) {
			p, err := identity.NewPinner(identity.PinOptions{Users: users, Ranges: ranges})
			if err != nil {
				t.Fatal(err)
			}
			po.Pinner = p
		}
	}
	report := func(po *policy.Options) { po.Mode = policy.ModeReport }
	const disallow = "User-agent: *\nDisallow: /private\n"
	const rsl = `<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><prohibits type="usage">ai-train</prohibits></license></content></rsl>`
	trainer := func(licenses bool) func(*policy.Options) {
		return func(o *policy.Options) {
			report(o)
			o.Usage = policy.UsageOptions{Enforce: true, Declarations: policy.NewDeclarations(map[string][]string{"ExampleBot": {"train-ai"}})}
			if licenses {
				o.Usage.Licenses = license.NewSource(license.SourceOptions{
					Fetcher: access.NewFetcher(access.FetcherOptions{Guard: &netguard.Guard{AllowPrivate: true}})})
			}
		}
	}
	for _, tc := range []struct {
		name      string
		files     map[string]string
		policy    func(*policy.Options)
		proxy     func(*proxy.Options)
		user      string
		tls       bool
		denied    []string // paths forwarded only because of report mode
		allowed   string   // a path forwarded because it is allowed, "" for none
		reason    string
		waitCause string
	}{
		{name: "global mode", files: map[string]string{"/robots.txt": disallow}, policy: report,
			denied: []string{"/private/paid"}, allowed: "/public", reason: "rule"},
		{name: "user", files: map[string]string{"/robots.txt": disallow}, user: "watched",
			policy: pinner([]identity.User{{Name: "watched", PasswordHash: hash, Token: "ExampleBot", Mode: policy.ModeReport}}, nil),
			denied: []string{"/private/paid"}, allowed: "/public", reason: "rule"},
		{name: "client range", files: map[string]string{"/robots.txt": disallow},
			policy: pinner(nil, []identity.ClientRange{{Prefix: netip.MustParsePrefix("127.0.0.0/8"), Token: "ExampleBot", Mode: policy.ModeReport}}),
			denied: []string{"/private/paid"}, allowed: "/public", reason: "rule"},
		{name: "usage preference", files: map[string]string{"/robots.txt": "User-agent: *\nAllow: /\nContent-Usage: train-ai=n\n"},
			policy: trainer(false), denied: []string{"/doc"}, reason: "usage-preference"},
		{name: "license", files: map[string]string{"/robots.txt": "User-agent: *\nAllow: /\nLicense: http://HOST/license.xml\n", "/license.xml": rsl},
			policy: trainer(true), denied: []string{"/doc"}, reason: "license"},
		{name: "politeness", files: map[string]string{"/robots.txt": disallow + "Crawl-delay: 0.2\n"},
			policy: func(po *policy.Options) {
				report(po)
				po.Politeness = politeness.New(politeness.Options{CrawlDelay: true}).Politeness()
			},
			denied: []string{"/private/a", "/private/b"}, reason: "rule", waitCause: "crawl-delay"},
		{name: "intercepted tunnel", files: map[string]string{"/robots.txt": disallow}, policy: report, tls: true,
			denied: []string{"/private/paid"}, allowed: "/public", reason: "rule"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var po *paytest.Origin
			var h *harness
			steps := func(o *proxy.Options) {
				signAndPay(t)(o)
				if tc.proxy != nil {
					tc.proxy(o)
				}
			}
			client := func() *http.Client { return h.client }
			if tc.tls {
				po = paytest.NewTLS(t, "USD 0.01")
				o := &origin{Server: po.Server}
				h, _, _ = interceptHarnessWith(t, originTLS(o), o, tc.policy, steps)
			} else {
				po = paytest.New(t, "USD 0.01")
				h = newHarness(t, harnessOptions{policy: tc.policy, proxy: steps})
				if tc.user != "" {
					client = func() *http.Client { return as(h, tc.user, "pw", nil) }
				}
			}
			po.Files = tc.files
			get := func(path string) *http.Response {
				req, _ := http.NewRequest(http.MethodGet, po.URL+path, nil)
				req.Header.Set("User-Agent", "ExampleBot/1.0")
				req.Header.Set("Crawler_Max_Price", "USD 1") // the client's own: never signed, never sent
				resp, err := client().Do(req)
				if err != nil {
					t.Fatalf("%s: %v", path, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				return resp
			}
			for i, path := range tc.denied {
				resp := get(path)
				if resp.StatusCode != http.StatusPaymentRequired || resp.Header.Get(payments.HeaderNotPaid) != "" {
					t.Errorf("%s: %d, %s %q; want the origin's 402 as it sent it", path, resp.StatusCode,
						payments.HeaderNotPaid, resp.Header.Get(payments.HeaderNotPaid))
				}
				l := lineFor(t, h, path)
				want := map[string]any{"decision": "deny", "enforced": false, "reason": tc.reason,
					auditlog.FieldEgressSkipped: auditlog.EgressSkippedReportOnly, auditlog.FieldNotPaid: auditlog.NotPaidReportOnly,
					auditlog.FieldPrice: "0.01", auditlog.FieldSignatureKeyID: nil, auditlog.FieldCharged: nil}
				if tc.waitCause != "" && i > 0 {
					want["reason"], want["robots_reason"] = tc.waitCause, tc.reason
				}
				assertFields(t, l, want)
			}
			if po.Paid() != 0 {
				t.Errorf("the origin was paid %d times for report-only requests", po.Paid())
			}
			for _, hd := range po.Headers() {
				if hd.Get("User-Agent") != "ExampleBot/1.0" {
					continue // the proxy's own fetches
				}
				if hd.Get("Signature") != "" || hd.Get("Signature-Input") != "" || hd.Get("Signature-Agent") != "" {
					t.Errorf("a report-only request reached the origin signed: %v", hd)
				}
				for name := range hd {
					if payments.RemovePriceFields(http.Header{name: nil}) {
						t.Errorf("a report-only request reached the origin with %s", name)
					}
				}
			}
			if tc.allowed == "" {
				return
			}
			if resp := get(tc.allowed); resp.StatusCode != http.StatusOK || po.Paid() != 1 {
				t.Fatalf("allowed %s: %d, origin paid %d; want 200, paid", tc.allowed, resp.StatusCode, po.Paid())
			}
			assertFields(t, lineFor(t, h, tc.allowed), map[string]any{"decision": "allow", auditlog.FieldEgressSkipped: nil,
				auditlog.FieldCharged: "0.01"})
			if l := lineFor(t, h, tc.allowed); l[auditlog.FieldSignatureKeyID] == nil {
				t.Errorf("allowed %s: not signed: %v", tc.allowed, l)
			}
		})
	}
}

// TestSigningOnlyRemovesClientPriceFields: with signing on and payments
// off, a client's own price fields (in any spelling) are removed before
// the request is signed: a signed crawler-exact-price would be billed to
// the operator's crawler, outside any budget.
func TestSigningOnlyRemovesClientPriceFields(t *testing.T) {
	step, key := signingStep(t)
	po := paytest.New(t, "USD 0.01")
	h := newHarness(t, harnessOptions{proxy: step})
	req, _ := http.NewRequest(http.MethodGet, po.URL+"/page", nil)
	req.Header.Set("User-Agent", "ExampleBot/1.0")
	req.Header.Set("Crawler-Exact-Price", "USD 0.01")
	req.Header["crawler_max_price"] = []string{"USD 1"}
	resp, err := h.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired || po.Paid() != 0 {
		t.Fatalf("%d, origin paid %d; want the 402, unpaid", resp.StatusCode, po.Paid())
	}
	hd := po.Headers()[len(po.Headers())-1]
	for name := range hd {
		if payments.RemovePriceFields(http.Header{name: nil}) {
			t.Errorf("the signed request reached the origin with %s", name)
		}
	}
	if l := lineFor(t, h, "/page"); l[auditlog.FieldSignatureKeyID] != key.ID {
		t.Errorf("audit line %v: want it signed by %s", l, key.ID)
	}
}
