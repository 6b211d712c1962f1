package verify_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/robotsproxy/robotsproxy/auditlog"
	"github.com/robotsproxy/robotsproxy/internal/access"
	"github.com/robotsproxy/robotsproxy/internal/audit"
	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
	"github.com/robotsproxy/robotsproxy/internal/check"
	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/internal/license"
	"github.com/robotsproxy/robotsproxy/internal/netguard"
	"github.com/robotsproxy/robotsproxy/internal/politeness"
	"github.com/robotsproxy/robotsproxy/internal/testkit"
	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// decisionSteps are the robots.txt, RSL license and declared purposes of
// the steps after the access result: usage preferences, licenses and
// politeness admission.
const (
	stepsRobots = "User-agent: *\nDisallow: /private\nContent-Usage: train-ai=n\nContent-Usage: /open/ train-ai=y\nLicense: http://HOST/license.xml\n\n" +
		"User-agent: slowbot\nCrawl-delay: 30\n"
	stepsLicense = `<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/"><license><permits type="usage">all</permits><prohibits type="usage">ai-train</prohibits></license></content>
  <content url="/paid/" server="https://rsl.example/api"><license><permits type="usage">all</permits></license></content>
</rsl>`
)

// stepCase is one request of the steps table, sent in order through one
// proxy (politeness counts the requests before).
type stepCase struct {
	name, path, ua string
	purpose        string // declared for ua's product token, "" for none
	want           policy.Reason
}

var stepCases = []stepCase{
	{"usage preference", "/x", "TrainBot/1.0", policy.PurposeTrainAI, auditlog.ReasonUsage},
	{"usage preference allows, license prohibits", "/open/x", "TrainBot/1.0", policy.PurposeTrainAI, auditlog.ReasonLicense},
	{"robots.txt denies first", "/private/x", "TrainBot/1.0", policy.PurposeTrainAI, auditlog.ReasonRule},
	{"license requires a token", "/paid/x", "SearchBot/1.0", policy.PurposeSearch, auditlog.ReasonLicenseRequired},
	{"license permits", "/x", "SearchBot/1.0", policy.PurposeSearch, auditlog.ReasonNoMatch},
	{"first request of a crawl delay", "/a", "SlowBot/1.0", "", auditlog.ReasonNoMatch},
	{"too early for the crawl delay", "/b", "SlowBot/1.0", "", auditlog.ReasonCrawlDelay},
}

// testDecisionSteps sends stepCases through the proxy (usage preferences,
// licenses and politeness enforced, its audit line written to a chained
// log, robots.txt and the license archived), check (-usage, -license)
// and audit verify (on the proxy's log and archive): the reason the
// proxy gives must be the one check's answer implies, and verify must
// verify every line. A change to any of those steps moves all three, or
// this fails.
func testDecisionSteps(t *testing.T) {
	origin := testkit.NewOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte(strings.ReplaceAll(stepsRobots, "HOST", r.Host)))
		case "/license.xml":
			w.Write([]byte(stepsLicense))
		default:
			w.Write([]byte("page"))
		}
	}))
	host := strings.TrimPrefix(origin.URL, "http://")
	dir := t.TempDir()
	ar, err := audit.OpenArchive(audit.ArchiveOptions{Dir: filepath.Join(dir, "archive"), ParseLimit: 512 << 10, Log: zerolog.Nop()})
	if err != nil {
		t.Fatal(err)
	}
	archived := func(a policy.Access) policy.Access {
		if err := ar.Record(a); err != nil {
			t.Error(err)
		}
		a.Raw = nil
		return a
	}
	guard := &netguard.Guard{AllowPrivate: true}
	fetcher := access.NewFetcher(access.FetcherOptions{Guard: guard, UserAgent: "robotsproxy-test"})
	cache := access.NewCache(func(ctx context.Context, scheme, authority string) policy.Access {
		return archived(fetcher.Fetch(ctx, scheme, authority))
	}, access.CacheOptions{})
	decl := map[string][]string{}
	for _, c := range stepCases {
		if c.purpose != "" {
			decl[strings.TrimSuffix(c.ua, "/1.0")] = []string{c.purpose}
		}
	}
	pol := policy.New(policy.Options{Identifier: identity.NewIdentifier(identity.DefaultBrowserTokens(), nil), Cache: cache,
		Usage: policy.UsageOptions{Enforce: true, Declarations: policy.NewDeclarations(decl),
			Licenses: license.NewSource(license.SourceOptions{Fetcher: fetcher, Record: archived})},
		Politeness: politeness.New(politeness.Options{CrawlDelay: true, Reject: true}).Politeness()})
	logPath := filepath.Join(dir, "audit.log")
	out, prev, err := audit.OpenFile(audit.FileOptions{Path: logPath})
	if err != nil {
		t.Fatal(err)
	}
	w := audit.NewWriter(out, audit.Options{Chain: true, Prev: prev})
	p := proxy.New(proxy.Options{Policy: pol, Transport: proxy.NewTransport(proxy.TransportOptions{AllowPrivate: guard.AllowPrivate, AllowPrivateRanges: guard.Allow}), Audit: w})
	srv := testkit.NewOrigin(t, p)
	proxyURL, _ := url.Parse(srv.URL)
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}

	robotsFile := filepath.Join(dir, "robots.txt")
	licenseFile := filepath.Join(dir, "license.xml")
	if err := os.WriteFile(robotsFile, []byte(strings.ReplaceAll(stepsRobots, "HOST", host)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(licenseFile, []byte(stepsLicense), 0o600); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{} // product tokens that sent a request before
	for _, c := range stepCases {
		u := origin.URL + c.path
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("User-Agent", c.ua)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := policy.Reason(resp.Header.Get(proxy.HeaderReason))
		if got == "" {
			got = auditlog.ReasonNoMatch // forwarded: its line says which (checked below)
		}

		var res check.Result
		var buf bytes.Buffer
		if _, err := check.Run(robotsFile, c.ua, []string{u}, check.Options{JSON: true, Stdout: &buf, Usage: c.purpose, License: licenseFile}); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(buf.Bytes(), &res); err != nil {
			t.Fatal(err)
		}
		implied := checkReason(res, seen[c.ua])
		seen[c.ua] = true
		if got != c.want || implied != c.want {
			t.Errorf("%s: the proxy gives %s, check's answer implies %s, want %s (check: %s)", c.name, got, implied, c.want, buf.String())
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := readReasons(t, logPath)
	for i, c := range stepCases {
		if i < len(lines) && lines[i] != string(c.want) {
			t.Errorf("%s: the audit line's reason is %s, want %s", c.name, lines[i], c.want)
		}
	}
	res, err := verify.Verify([]string{logPath}, verify.VerifyOptions{Archive: filepath.Join(dir, "archive"), Genesis: true,
		Report: func(p verify.Problem) { t.Errorf("audit verify: %s", p) }})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(stepCases); res.Decisions != n || res.Verified != n || len(lines) != n {
		t.Errorf("audit verify: got %d lines, %d decisions, %d verified, want %d of each", len(lines), res.Decisions, res.Verified, n)
	}
}

// checkReason is the reason check's answer for a URL implies, in the
// order the steps run: robots.txt's rules, then the usage preference
// for the declared purpose, then the license, then politeness (a second
// request within the crawl delay is refused).
func checkReason(res check.Result, again bool) policy.Reason {
	switch {
	case !res.Allowed:
		return auditlog.ReasonRule
	case res.Usage != nil && (res.Usage.ContentUsage == "n" || res.Usage.ContentSignal == "no"):
		return auditlog.ReasonUsage
	case res.License != nil && res.Usage != nil && (res.License.Decision == string(policy.LicenseProhibited) || res.License.Decision == string(policy.LicenseUnreadable)):
		return auditlog.ReasonLicense
	case res.License != nil && res.Usage != nil && res.License.Decision == string(policy.LicenseRequired):
		return auditlog.ReasonLicenseRequired
	case again && res.CrawlDelay != nil:
		return auditlog.ReasonCrawlDelay
	case res.Rule != nil:
		return auditlog.ReasonRule
	}
	return auditlog.ReasonNoMatch
}

// readReasons returns the reason of each line of the audit log at path.
func readReasons(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			Reason string `json:"reason"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		out = append(out, l.Reason)
	}
	return out
}
