package proxy_test

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/robotsproxy/robotsproxy/internal/identity"
	"github.com/robotsproxy/robotsproxy/policy"
)

// TestReportMode: in report mode a request that robots.txt disallows is
// forwarded with no sign of robotsproxy, and audited as a denial that was
// not enforced; the destination policy stays enforced; a pinned identity's
// mode wins over the default.
func TestReportMode(t *testing.T) {
	o := newOrigin(t, serveRobots("User-agent: *\nDisallow: /private\n"))
	hash, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	pinner, err := identity.NewPinner(identity.PinOptions{Users: []identity.User{
		{Name: "watched", PasswordHash: hash, Token: "PartnerBot", Mode: policy.ModeReport},
		{Name: "enforced", PasswordHash: hash, Token: "OtherBot", Mode: policy.ModeEnforce},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, def := range []policy.Mode{policy.ModeReport, policy.ModeEnforce} {
		h := newHarness(t, harnessOptions{policy: func(po *policy.Options) {
			po.Mode, po.Pinner, po.DenyHosts = def, pinner, []string{"denied.example"}
		}})
		cases := []struct {
			user, target string
			want         int
			enforced     bool
			reason       string
		}{
			{"", o.URL + "/private/a", map[policy.Mode]int{policy.ModeReport: 200, policy.ModeEnforce: 403}[def], def == policy.ModeEnforce, "rule"},
			{"", o.URL + "/public", 200, true, "no-matching-rule"},
			{"watched", o.URL + "/private/b", 200, false, "rule"},
			{"enforced", o.URL + "/private/c", 403, true, "rule"},
			{"watched", "http://denied.example/private", 403, true, "host-denied"},
		}
		for _, c := range cases {
			client := as(h, c.user, "pw", nil)
			got, hdr := status(t, client, c.target, "SomeBot/1.0")
			if got != c.want {
				t.Errorf("default %s, user %q, %s: got %d, want %d", def, c.user, c.target, got, c.want)
			}
			if got == 200 {
				for k := range hdr {
					if strings.HasPrefix(strings.ToLower(k), "x-robotsproxy") {
						t.Errorf("default %s, user %q, %s: forwarded response carries %s; the bot must not see robotsproxy", def, c.user, c.target, k)
					}
				}
			}
			l := lastLine(t, h)
			if l["reason"] != c.reason || l["enforced"] != c.enforced {
				t.Errorf("default %s, user %q, %s: audit reason %v enforced %v; want %s %v", def, c.user, c.target, l["reason"], l["enforced"], c.reason, c.enforced)
			}
			if c.reason == "rule" && l["decision"] != "deny" {
				t.Errorf("default %s, user %q, %s: audit decision %v, want deny", def, c.user, c.target, l["decision"])
			}
		}
	}
	if n := o.Count("/private/b"); n != 2 {
		t.Errorf("the watched bot's disallowed request reached the origin %d times, want 2 (once per default mode)", n)
	}
	if n := o.Count("/private/c"); n != 0 {
		t.Errorf("the enforced bot's disallowed request reached the origin %d times, want 0", n)
	}
}
