package e2e

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/testkit"
)

// TestLicenseLinkThroughBinary runs the binary with usage.enforce and an
// archive against an origin whose robots.txt names no license and whose
// /linked/ names one in a Link header field, prohibiting ai-train: the
// first request is answered (the Link cannot deny it), the second for the
// same resource is refused with reason license and license_source link,
// another path is not affected, and audit verify re-decides every line.
func TestLicenseLinkThroughBinary(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /private\n")
		case "/license.xml":
			w.Header().Set("Content-Type", "application/rsl+xml")
			_, _ = io.WriteString(w, rslLicense)
		case "/linked/":
			w.Header().Set("Link", `</license.xml>; rel="license"; type="application/rsl+xml"`)
			_, _ = io.WriteString(w, "linked")
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
`))
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyURL(p.proxyURL("", ""))}}
	cases := []struct {
		path           string
		status         int
		reason, source string
	}{
		{"/linked/", 200, "no-matching-rule", ""}, // names the license: recorded
		{"/linked/", 403, "license", "link"},      // the remembered license decides
		{"/other", 200, "no-matching-rule", ""},   // another resource: not affected
	}
	for _, c := range cases {
		req, _ := http.NewRequest(http.MethodGet, origin.URL+c.path, nil)
		req.Header.Set("User-Agent", "TrainBot/1.0")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d", c.path, resp.StatusCode, c.status)
		}
	}
	p.stop(t)
	lines := testkit.ReadAuditLines(t, logPath)
	if len(lines) != len(cases) {
		t.Fatalf("%d audit lines, want %d", len(lines), len(cases))
	}
	for i, c := range cases {
		l := lines[i]
		src, _ := l["license_source"].(string)
		if l["reason"] != c.reason || src != c.source {
			t.Errorf("line %d (%s): reason %v, license_source %v; want %s, %q", i, c.path, l["reason"], l["license_source"], c.reason, c.source)
		}
	}
	if l := lines[0]; l["license_link"] != origin.URL+"/license.xml" {
		t.Errorf("line 0: license_link %v", l["license_link"])
	}
	if l := lines[1]; l["license_url"] != origin.URL+"/license.xml" || l["license_decision"] != "prohibited" || len(fmt.Sprint(l["license_sha256"])) != 64 {
		t.Errorf("line 1: license_url %v, license_decision %v, license_sha256 %v", l["license_url"], l["license_decision"], l["license_sha256"])
	}
	if stdout, stderr, code := runBinary(t, "", "audit", "verify", "-archive", archive, logPath); code != 0 || !strings.Contains(stdout+stderr, "3: 3 verified") {
		t.Errorf("audit verify: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
