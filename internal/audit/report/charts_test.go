package report

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/robotsproxy/robotsproxy/internal/chart"
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

// A sparse log over one-second buckets draws one bar a non-empty bucket
// and series: no line joins buckets across the empty ones, each axis has
// labels past 0, and the legend lists only what happened.
func TestChartsSparseBars(t *testing.T) {
	log := `{"time":"2026-11-22T10:00:00Z","url":"https://a.example/1","decision":"allow","reason":"rule","product_token":"gptbot"}
{"time":"2026-11-22T10:00:12Z","url":"https://a.example/2","decision":"deny","reason":"rule","product_token":"gptbot"}
{"time":"2026-11-22T10:00:12Z","url":"https://a.example/3","decision":"deny","reason":"rule","product_token":"gptbot"}
`
	rep, err := Collect([]string{writeFile(t, t.TempDir(), "audit.log", log)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	overview, perToken, err := charts(rep)
	if err != nil {
		t.Fatal(err)
	}
	if len(overview) != 2 || len(perToken) != 1 {
		t.Fatalf("got %d overview and %d per-token charts, want 2 (decisions, sites; no access results in the log) and 1", len(overview), len(perToken))
	}
	for _, c := range []chart.Figure{overview[0], perToken[0]} {
		svg := string(c.SVG)
		if n := strings.Count(svg, `fill="#2e7d32"`); n != 1 {
			t.Errorf("%s: %d green bars, want 1", c.Title, n)
		}
		if n := strings.Count(svg, `fill="#c62828"`); n != 1 {
			t.Errorf("%s: %d red bars, want 1", c.Title, n)
		}
		if strings.Contains(svg, `stroke="#2e7d32"`) || strings.Contains(svg, `stroke="#c62828"`) || strings.Contains(svg, "<polyline") {
			t.Errorf("%s: a data line is drawn", c.Title)
		}
		for _, want := range []string{">1<", ">2<", "requests per 1 s", "time (UTC), one bar per 1 s"} {
			if !strings.Contains(svg, want) {
				t.Errorf("%s: want %q in the SVG", c.Title, want)
			}
		}
		if want := []chart.LegendItem{{Name: "allowed", Color: "#2e7d32"}, {Name: "refused", Color: "#c62828"}}; !reflect.DeepEqual(c.Legend, want) {
			t.Errorf("%s: legend %v, want %v", c.Title, c.Legend, want)
		}
	}
	if !strings.Contains(string(overview[1].SVG), "requests refused") || !strings.Contains(string(overview[1].SVG), "https://a.example") {
		t.Errorf("sites chart: want its axis label and the site")
	}
}
