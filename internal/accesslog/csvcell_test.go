package accesslog

import (
	"testing"
	"time"
)

// TestCSVRowNeutralisesFormulas: a User-Agent, path or rule from a hostile
// log or robots.txt that a spreadsheet would read as a formula is written
// quoted in the csv output, as audit report writes it.
func TestCSVRowNeutralisesFormulas(t *testing.T) {
	f := &Finding{File: "access.log", Line: 7, Time: time.Unix(0, 0), Client: "192.0.2.1", Method: "GET",
		Path: "=HYPERLINK(\"http://x\")", Status: 200, UserAgent: "@SUM(1+1)", ProductToken: "+bot",
		Rule: "-rule", Group: "*"}
	row := csvRow("violation", f)
	want := map[int]string{6: "'=HYPERLINK(\"http://x\")", 8: "'@SUM(1+1)", 9: "'+bot", 11: "'-rule", 13: "*"}
	for i, w := range want {
		if row[i] != w {
			t.Errorf("%s: got %q, want %q", csvHeader[i], row[i], w)
		}
	}
}
