package check_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/check"
)

// TestRunPathReadings checks that check decides a path as the proxy does,
// under every reading an origin may take of it, and names the reading that
// decided (path_resolved); -rfc keeps the path as sent only, and says so.
func TestRunPathReadings(t *testing.T) {
	const body = "User-agent: *\nDisallow: /action/\n"
	tests := []struct {
		url        string
		allowed    bool   // as the proxy decides
		resolved   string // path_resolved, "" when the path as sent decided
		rfcAllowed bool   // -rfc
	}{
		{"http://example.com/action/x", false, "", false},
		{"http://example.com/index.html/../action/x", false, "/action/x", true},
		{"http://example.com/%2e%2e/action/x", false, "/action/x", true},
		{"http://example.com/a/..%2Faction/x", false, "/action/x", true},
		{"http://example.com//action/x", false, "/action/x", true},
		{"http://example.com/action;p/x", false, "/action/x", true},
		{"http://example.com/actions/x", true, "", true},
		{"http://example.com/a/../b", true, "", true},
		{"http://example.com/robots.txt", true, "", true},
	}
	path := writeRobots(t, body)
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			for _, rfc := range []bool{false, true} {
				var out bytes.Buffer
				all, err := check.Run(path, "ExampleBot", []string{tt.url}, check.Options{RFC: rfc, Stdout: &out})
				if err != nil {
					t.Fatal(err)
				}
				want, wantResolved := tt.allowed, tt.resolved
				if rfc {
					want, wantResolved = tt.rfcAllowed, ""
				}
				line := out.String()
				if all != want || strings.HasPrefix(line, "ALLOWED") != want {
					t.Errorf("Run(rfc %v, %q): got %q (all %v), want allowed %v", rfc, tt.url, line, all, want)
				}
				if gotResolved := strings.Contains(line, "\tpath_resolved "+wantResolved+"\t") || strings.HasSuffix(line, "\tpath_resolved "+wantResolved+"\n"); wantResolved != "" && !gotResolved {
					t.Errorf("Run(rfc %v, %q): got %q, want path_resolved %s", rfc, tt.url, line, wantResolved)
				}
				if wantResolved == "" && strings.Contains(line, "path_resolved") {
					t.Errorf("Run(rfc %v, %q): got %q, want no path_resolved", rfc, tt.url, line)
				}
				if said := strings.Contains(line, "reading rfc9309"); said != rfc {
					t.Errorf("Run(rfc %v, %q): got %q, want the RFC 9309 reading named: %v", rfc, tt.url, line, rfc)
				}

				out.Reset()
				if _, err := check.Run(path, "ExampleBot", []string{tt.url}, check.Options{RFC: rfc, JSON: true, Stdout: &out}); err != nil {
					t.Fatal(err)
				}
				var res check.Result
				if err := json.Unmarshal(out.Bytes(), &res); err != nil {
					t.Fatal(err)
				}
				wantReading := ""
				if rfc {
					wantReading = check.ReadingRFC
				}
				if res.Allowed != want || res.PathResolved != wantResolved || res.Reading != wantReading {
					t.Errorf("Run(-json, rfc %v, %q): got allowed %v path_resolved %q reading %q, want %v %q %q",
						rfc, tt.url, res.Allowed, res.PathResolved, res.Reading, want, wantResolved, wantReading)
				}
			}
		})
	}
}
