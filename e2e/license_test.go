package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// rslLicense is the RSL license the origin of TestLicenseThroughBinary
// serves: ai-train prohibited everywhere, a License Server for /paid/.
const rslLicense = `<?xml version="1.0" encoding="UTF-8"?>
<rsl xmlns="https://rslstandard.org/rsl">
  <content url="/">
    <license>
      <permits type="usage">all</permits>
      <prohibits type="usage">ai-train</prohibits>
    </license>
  </content>
  <content url="/paid/" server="https://rsl.example/api">
    <license><permits type="usage">search</permits></license>
  </content>
</rsl>
`

// TestLicenseThroughBinary runs the binary as a proxy with usage.enforce
// and an archive against an origin whose robots.txt names an RSL license:
// a prohibited purpose gets 403 license, a License Server 403
// license-required, a permitted purpose goes through; the audit line
// carries the license fields, audit verify re-decides every line from the
// archive, and check -json -license gives the same decisions.
func TestLicenseThroughBinary(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\nLicense: http://"+r.Host+"/license.xml\n")
		case "/license.xml":
			w.Header().Set("Content-Type", "application/rsl+xml")
			_, _ = io.WriteString(w, rslLicense)
		default:
			_, _ = io.WriteString(w, "origin:"+r.RequestURI)
		}
	}))
	t.Cleanup(origin.Close)
	dir := t.TempDir()
	logPath, archive := filepath.Join(dir, "audit.log"), filepath.Join(dir, "archive")
	p := startProxy(t, fmt.Sprintf("log:\n  file: %q\naudit:\n  archive_dir: %q\n%s", logPath, archive, `usage:
  enforce: true
  purposes:
    TrainBot: [train-ai]
    SearchBot: [search]
`))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(p.proxyURL("", ""))}}
	cases := []struct {
		ua, path         string
		status           int
		reason, decision string
	}{
		{"TrainBot/1.0", "/doc", 403, "license", "prohibited"},
		{"SearchBot/1.0", "/doc", 200, "no-matching-rule", "permitted"},
		{"SearchBot/1.0", "/paid/x", 403, "license-required", "license-required"},
		{"TrainBot/1.0", "/private", 403, "rule", "prohibited"}, // recorded; robots.txt decided
		{"PlainBot/1.0", "/doc", 200, "no-matching-rule", ""},   // no purpose: no license read
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, origin.URL+c.path, nil)
		req.Header.Set("User-Agent", c.ua)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: status %d, want %d", c.ua, c.path, resp.StatusCode, c.status)
		}
	}
	p.stop(t)
	lines := testkit.ReadAuditLines(t, logPath)
	if len(lines) != len(cases) {
		t.Fatalf("%d audit lines, want %d", len(lines), len(cases))
	}
	for i, c := range cases {
		l := lines[i]
		dec, _ := l["license_decision"].(string)
		if l["reason"] != c.reason || dec != c.decision {
			t.Errorf("line %d (%s %s): reason %v, license_decision %v; want %s, %q", i, c.ua, c.path, l["reason"], l["license_decision"], c.reason, c.decision)
		}
		if c.decision != "" && (l["license_url"] != origin.URL+"/license.xml" || len(fmt.Sprint(l["license_sha256"])) != 64) {
			t.Errorf("line %d: license_url %v, license_sha256 %v", i, l["license_url"], l["license_sha256"])
		}
	}
	if stdout, stderr, code := runBinary(t, "", "audit", "verify", "-archive", archive, logPath); code != 0 || !strings.Contains(stdout+stderr, "5: 5 verified") {
		t.Errorf("audit verify: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if body, stderr, code := runBinary(t, "", "audit", "show", "-archive", archive, "-body", lines[0]["license_sha256"].(string)); code != 0 || body != rslLicense {
		t.Errorf("audit show: exit %d, %q\n%s", code, body, stderr)
	}

	robotsFile, licenseFile := filepath.Join(dir, "robots.txt"), filepath.Join(dir, "license.xml")
	_ = os.WriteFile(robotsFile, []byte("User-agent: *\nLicense: "+origin.URL+"/license.xml\n"), 0o600)
	_ = os.WriteFile(licenseFile, []byte(rslLicense), 0o600)
	stdout, stderr, code := runBinary(t, "", "check", "-json", "-usage", "train-ai", "-license", licenseFile, robotsFile, "TrainBot", origin.URL+"/doc")
	var res struct {
		License struct{ Decision, Refused, Element, SHA256 string }
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != 0 {
		t.Fatalf("check: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	if res.License.Decision != "prohibited" || res.License.Refused != "train-ai" || !strings.Contains(res.License.Element, `url="/"`) {
		t.Errorf("check -json license: %+v", res.License)
	}
}
