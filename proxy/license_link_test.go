package proxy_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/robotsproxy/robotsproxy/policy"
	"github.com/robotsproxy/robotsproxy/proxy"
)

// linkOrigin serves a robots.txt (with a License line naming a license
// that permits everything when robotsLicense), and pages; /linked/ names
// /link-license.xml (status linkStatus) in a Link header field, a license
// that prohibits ai-train and search.
func linkOrigin(t *testing.T, robotsLicense bool, linkStatus int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			s := "User-agent: *\nAllow: /\n"
			if robotsLicense {
				s += "License: http://" + r.Host + "/license.xml\n"
			}
			w.Write([]byte(s))
		case "/license.xml":
			w.Write([]byte(`<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><permits type="usage">all</permits></license></content></rsl>`))
		case "/link-license.xml":
			w.WriteHeader(linkStatus)
			w.Write([]byte(`<rsl xmlns="https://rslstandard.org/rsl"><content url="/"><license><prohibits type="usage">ai-train,search</prohibits></license></content></rsl>`))
		case "/linked/":
			w.Header().Set("Link", `</link-license.xml>; rel="license"; type="application/rsl+xml"`)
			w.Write([]byte("page"))
		default:
			w.Write([]byte("page"))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestLicenseLinkApplies: the license a response named in a Link header
// field decides later requests for the same resource, like a robots.txt
// License line's, never the response that carried it, nor other paths.
func TestLicenseLinkApplies(t *testing.T) {
	tests := []struct {
		name          string
		robotsLicense bool
		linkStatus    int
		enforce       bool
		mode          policy.Mode
		ua            string
		wantStatus    int
		wantLine      map[string]any
	}{
		{"prohibited, enforced", false, 200, true, "", "TrainBot/1.0", 403,
			map[string]any{"decision": "deny", "reason": "license", "enforced": true, "license_source": "link",
				"license_decision": "prohibited", "license_refused": "train-ai"}},
		{"prohibited, report mode", false, 200, true, policy.ModeReport, "TrainBot/1.0", 200,
			map[string]any{"decision": "deny", "reason": "license", "enforced": false, "license_source": "link"}},
		{"prohibited, not enforced", false, 200, false, "", "TrainBot/1.0", 200,
			map[string]any{"decision": "allow", "reason": "rule", "license_source": "link", "license_decision": "prohibited"}},
		{"unreadable fails closed", false, 503, true, "", "TrainBot/1.0", 403,
			map[string]any{"decision": "deny", "reason": "license", "license_source": "link", "license_decision": "unreadable"}},
		{"refused by the link, permitted by robots.txt", true, 200, true, "", "SearchBot/1.0", 403,
			map[string]any{"decision": "deny", "reason": "license", "license_source": "link",
				"license_decision": "prohibited", "license_refused": "search"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := linkOrigin(t, tt.robotsLicense, tt.linkStatus)
			h := licenseHarness(t, tt.enforce, tt.mode)
			linkURL := o.URL + "/link-license.xml"
			// The response that names the license is not decided by it.
			if resp, body := h.do(t, "GET", o.URL+"/linked/", tt.ua, ""); resp.StatusCode != 200 {
				t.Fatalf("first request: status %d (body %q)", resp.StatusCode, body)
			}
			first := lastLine(t, h)
			assertFields(t, first, map[string]any{"decision": "allow", "license_link": linkURL})
			if first["license_source"] == "link" {
				t.Errorf("first request decided by the link it carried: %v", first)
			}
			resp, body := h.do(t, "GET", o.URL+"/linked/", tt.ua, "")
			if resp.StatusCode != tt.wantStatus {
				t.Fatalf("second request: status %d, want %d (body %q)", resp.StatusCode, tt.wantStatus, body)
			}
			l := lastLine(t, h)
			assertFields(t, l, tt.wantLine)
			if l["license_url"] != linkURL {
				t.Errorf("license_url %v, want %s", l["license_url"], linkURL)
			}
			if tt.linkStatus == 200 {
				if s, _ := l["license_sha256"].(string); len(s) != 64 {
					t.Errorf("license_sha256 %v", l["license_sha256"])
				}
			}
			if tt.wantStatus == 403 && resp.Header.Get(proxy.HeaderReason) != "license" {
				t.Errorf("%s: %q", proxy.HeaderReason, resp.Header.Get(proxy.HeaderReason))
			}
			// Another path of the same site is not affected.
			if resp, _ := h.do(t, "GET", o.URL+"/other", tt.ua, ""); resp.StatusCode != 200 {
				t.Errorf("other path: status %d", resp.StatusCode)
			}
			if other := lastLine(t, h); other["license_source"] == "link" {
				t.Errorf("other path decided by the link: %v", other)
			}
		})
	}
}

// TestLicenseLinkNoPurpose: without declared purposes a Link is neither
// remembered nor read.
func TestLicenseLinkNoPurpose(t *testing.T) {
	o := linkOrigin(t, false, 200)
	h := licenseHarness(t, true, "")
	for i := 0; i < 2; i++ {
		if resp, _ := h.do(t, "GET", o.URL+"/linked/", "OtherBot/1.0", ""); resp.StatusCode != 200 {
			t.Fatalf("request %d: status %d", i, resp.StatusCode)
		}
		assertFields(t, lastLine(t, h), map[string]any{"decision": "allow", "license_url": nil, "license_source": nil})
	}
	// A crawler with declared purposes then reads nothing remembered.
	if resp, _ := h.do(t, "GET", o.URL+"/linked/", "TrainBot/1.0", ""); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}
