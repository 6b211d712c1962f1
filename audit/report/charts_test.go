package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestChartsShortSpan: a log that spans seconds gets one-second buckets,
// and its charts have a time axis (before, one 60 s bucket drew an empty
// chart).
func TestChartsShortSpan(t *testing.T) {
	tests := []struct {
		name    string
		offsets []int // seconds after 10:00:00
		width   int64
		buckets int
		label   string // an X tick label
	}{
		{"twelve seconds", []int{0, 3, 7, 12}, 1, 13, "10:00:04"},
		{"one second", []int{0, 0}, 1, 1, "10:00:00"},
		{"fifty seconds", []int{0, 20, 50}, 1, 51, "10:00:20"},
		{"ten minutes", []int{0, 300, 600}, 5, 121, "11-22 10:05"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			for i, s := range tt.offsets {
				fmt.Fprintf(&b, `{"time":"2026-11-22T10:%02d:%02dZ","method":"GET","url":"https://a.example/%d","decision":"deny","reason":"rule","product_token":"gptbot","token_source":"user-agent","robots_url":"https://a.example/robots.txt","access_result":"successful","enforced":true}`+"\n", s/60, s%60, i)
			}
			rep, err := Collect([]string{writeFile(t, t.TempDir(), "audit.log", b.String())}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tl := rep.Timelines; tl.BucketSeconds != tt.width || tl.Buckets != tt.buckets {
				t.Errorf("grid: got %d s x %d, want %d s x %d", tl.BucketSeconds, tl.Buckets, tt.width, tt.buckets)
			}
			overview, _, err := charts(rep)
			if err != nil {
				t.Fatal(err)
			}
			if len(overview) == 0 {
				t.Fatal("got no charts")
			}
			svg := string(overview[0].SVG)
			for _, want := range []string{fmt.Sprintf("requests per %s", bucketName(tt.width)), ">" + tt.label + "<"} {
				if !strings.Contains(svg, want) {
					t.Errorf("chart %q: want %q in the SVG", overview[0].Title, want)
				}
			}
		})
	}
}
