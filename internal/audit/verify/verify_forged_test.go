package verify_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/audit/verify"
)

// TestVerifyForgedReasons appends one line with a correctly recomputed
// prev for each reason that carries a decision, forged or genuine, and
// checks that verify re-decides it: a forged line is a problem of the
// right kind, a genuine one verifies.
func TestVerifyForgedReasons(t *testing.T) {
	// Lines of the fixture's current file used as bases (0-based).
	const (
		denyRule    = 0 // ExampleBot, /private/x: deny, rule
		allowNoRule = 2 // ExampleBot, /public: allow, no-matching-rule
		starDeny    = 3 // OtherBot, /anything: deny, rule of the "*" group
	)
	// nameRule edits the starDeny line into one for the crawler named
	// name, allowed by the group "User-agent: MJ12bot" of robotsA.
	nameRule := func(name string) map[string]string {
		return map[string]string{
			`"user_agent":"OtherBot/2","decision":"deny"`:                         `"user_agent":"Mozilla/5.0 (compatible; ` + name + `/v1.4.8)","decision":"allow"`,
			`"product_token":"OtherBot"`:                                          `"product_token":"` + name + `"`,
			`"candidates":["OtherBot"]`:                                           `"candidates":["` + name + `"]`,
			`"group":"*","star_fallback":true,"rule":"Disallow: /","rule_line":6`: `"group":"mj12bot","star_fallback":false,"rule":"Allow: /","rule_line":9`,
		}
	}
	type forged struct {
		base   int               // a line of the current file, -1 for a bare line
		edit   map[string]string // replacements in the base line
		fields string            // a bare line's fields; ORIGIN (here and in edit) is origin A's URL, HOSTPORT its authority
	}
	tests := []struct {
		name   string
		line   forged
		exempt []string // the configuration's exempt_hosts; nil: none given
		want   verify.Kind
	}{
		{"implicit-robots-txt on /robots.txt", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/robots.txt","decision":"allow","reason":"implicit-robots-txt","candidates":["examplebot"]`}, nil, ""},
		{"implicit-robots-txt on another path", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/private/x","decision":"allow","reason":"implicit-robots-txt","candidates":["examplebot"]`}, nil, verify.KindDecision},
		{"implicit-robots-txt through a dot segment", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/robots.txt/../private/x","decision":"allow","reason":"implicit-robots-txt","candidates":["examplebot"]`}, nil, verify.KindDecision},
		{"implicit-robots-txt denying", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/robots.txt","decision":"deny","reason":"implicit-robots-txt","candidates":["examplebot"]`}, nil, verify.KindDecision},
		{"crawl-delay wait with robots_reason", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"crawl-delay","robots_reason":"no-matching-rule"`}}, nil, ""},
		{"crawl-delay refusal with robots_reason", forged{base: allowNoRule,
			edit: map[string]string{`"decision":"allow","reason":"no-matching-rule"`: `"decision":"deny","reason":"crawl-delay","robots_reason":"no-matching-rule"`}}, nil, ""},
		{"crawl-delay without robots_reason", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"crawl-delay"`}}, nil, verify.KindDecision},
		{"backoff without robots_reason", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"backoff"`}}, nil, verify.KindDecision},
		{"host-concurrency without robots_reason", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"host-concurrency"`}}, nil, verify.KindDecision},
		{"crawl-delay allowing a disallowed path", forged{base: denyRule,
			edit: map[string]string{`"decision":"deny","reason":"rule"`: `"decision":"allow","reason":"crawl-delay","robots_reason":"rule"`}}, nil, verify.KindDecision},
		{"crawl-delay with a wrong robots_reason", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"crawl-delay","robots_reason":"rule"`}}, nil, verify.KindDecision},
		{"backoff with a politeness robots_reason", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"backoff","robots_reason":"crawl-delay"`}}, nil, verify.KindDecision},
		{"override without a configuration", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/private/x","decision":"allow","reason":"override","candidates":["examplebot"]`}, nil, verify.KindUnverifiable},
		{"override of a host not exempt", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/private/x","decision":"allow","reason":"override","candidates":["examplebot"]`}, []string{"example.com"}, verify.KindDecision},
		{"override of an exempt host", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/private/x","decision":"allow","reason":"override","candidates":["examplebot"]`}, []string{"127.0.0.1"}, ""},
		{"override of an exempt host by CONNECT", forged{base: -1,
			fields: `"method":"CONNECT","url":"HOSTPORT","decision":"allow","reason":"override","candidates":["examplebot"]`}, []string{"127.0.0.1"}, ""},
		{"override denying", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/private/x","decision":"deny","reason":"override","candidates":["examplebot"]`}, []string{"127.0.0.1"}, verify.KindDecision},
		{"usage-preference allowing", forged{base: allowNoRule,
			edit: map[string]string{`"decision":"allow","reason":"no-matching-rule"`: `"decision":"allow","reason":"usage-preference","usage_refused":"train-ai"`}}, nil, verify.KindDecision},
		{"usage-preference that robots.txt does not state", forged{base: allowNoRule,
			edit: map[string]string{`"decision":"allow","reason":"no-matching-rule"`: `"decision":"deny","reason":"usage-preference","purposes":["train-ai"],"usage_refused":"train-ai"`}}, nil, verify.KindDecision},
		{"usage-preference on a disallowed path", forged{base: denyRule,
			edit: map[string]string{`"decision":"deny","reason":"rule"`: `"decision":"deny","reason":"usage-preference","purposes":["train-ai"],"usage_refused":"train-ai"`}}, nil, verify.KindDecision},
		{"robots.txt of another authority", forged{base: allowNoRule,
			edit: map[string]string{`"url":"ORIGIN/public"`: `"url":"http://other.example/public"`}}, nil, verify.KindDecision},
		{"allowed by a group that names the crawler whole (the name rule)", forged{base: starDeny, edit: nameRule("MJ12bot")}, nil, ""},
		{"allowed for a name no group names", forged{base: starDeny, edit: nameRule("MJ12botX")}, nil, verify.KindDecision},
		{"allowed for a reason that never allows", forged{base: -1,
			fields: `"method":"GET","url":"ORIGIN/private/x","decision":"allow","reason":"host-denied","candidates":["examplebot"]`}, nil, verify.KindDecision},
		{"allowed for an unknown reason", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"trusted"`}}, nil, verify.KindDecision},
		{"rule line with the reason of another access result", forged{base: allowNoRule,
			edit: map[string]string{`"reason":"no-matching-rule"`: `"reason":"unavailable"`}}, nil, verify.KindDecision},
	}
	origin := regexp.MustCompile(`"robots_url":"(http://[^"/]+)/robots.txt"`)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			var added string
			editLines(t, f.current, func(l []string) []string {
				base := l[0]
				if tt.line.base >= 0 {
					base = l[tt.line.base]
				}
				m := origin.FindStringSubmatch(l[denyRule])
				if m == nil {
					t.Fatalf("no robots_url in %s", l[denyRule])
				}
				line := base
				if tt.line.base < 0 {
					line = `{"time":"2026-11-22T20:10:51Z",` + strings.NewReplacer("ORIGIN", m[1], "HOSTPORT", strings.TrimPrefix(m[1], "http://")).Replace(tt.line.fields) +
						`,"status":200,"prev":"` + strings.Repeat("0", 64) + "\"}\n"
				}
				for from, to := range tt.line.edit {
					from = strings.ReplaceAll(from, "ORIGIN", m[1])
					if !strings.Contains(line, from) {
						t.Fatalf("no %s in %s", from, line)
					}
					line = strings.Replace(line, from, to, 1)
				}
				added = line
				n := len(l) - 1 // l ends with "" after the last newline
				l = append(l[:n], line, "")
				return rechain(l, n)
			})
			var got []spot
			res, err := verify.Verify([]string{f.backup, f.current}, verify.VerifyOptions{Archive: f.archive, ExemptHosts: tt.exempt,
				Report: func(p verify.Problem) {
					got = append(got, spot{"current", p.Line, p.Kind})
					t.Log(p)
				}})
			if err != nil {
				t.Fatal(err)
			}
			var want []spot
			if tt.want != "" {
				want = []spot{{"current", 11, tt.want}}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("line %s: problems: got %v, want %v", added, got, want)
			}
			if res.Decisions != 19 {
				t.Errorf("decisions: got %d, want 19 (the appended line is one)", res.Decisions)
			}
		})
	}
}
