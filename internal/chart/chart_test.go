package chart

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCountAxis(t *testing.T) {
	for _, c := range []struct{ top, step, axis uint64 }{
		{0, 1, 1}, {1, 1, 1}, {2, 1, 2}, {5, 1, 5}, {7, 2, 8}, {23, 5, 25}, {250, 50, 250}, {251, 100, 300}, {9_999, 2000, 10_000},
	} {
		if s, a := countStep(c.top), countAxis(c.top); s != c.step || a != c.axis {
			t.Errorf("top %d: step %d, axis %d; want %d, %d", c.top, s, a, c.step, c.axis)
		}
		ticks := countTicks(c.axis)
		if len(ticks) < 2 && c.axis > 0 || ticks[0] != 0 || ticks[len(ticks)-1] != c.axis {
			t.Errorf("top %d: ticks %v, want 0 up to %d", c.top, ticks, c.axis)
		}
	}
}

func TestTimeTicks(t *testing.T) {
	lo := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).Unix()
	for _, c := range []struct {
		span  int64
		first string
		max   int
	}{
		{13, "10:00:00", 7}, {600, "11-22 10:00", 7}, {3 * 86400, "11-22 12:00", 7}, {3 * 365 * 86400, "2026", 7},
	} {
		ticks := timeTicks(lo, lo+c.span)
		if len(ticks) == 0 || len(ticks) > c.max || ticks[0].label != c.first {
			t.Errorf("span %d s: ticks %v, want at most %d from %q", c.span, ticks, c.max, c.first)
		}
		for _, tk := range ticks {
			if tk.at < lo || tk.at > lo+c.span {
				t.Errorf("span %d s: tick %v outside the span", c.span, tk)
			}
		}
	}
}

// A time chart draws one rect a non-zero part of a bar, in its series'
// colour (a short series counts 0 past its end), labels both axes,
// escapes names, and leaves out of the legend the series that never
// happened.
func TestDrawTime(t *testing.T) {
	f, err := Bars{Title: "a <b> chart", ValueLabel: "requests per 1 s", AcrossLabel: "time (UTC)",
		Start: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC), Step: time.Second,
		Series: []Series{{"ok", "#00ff00", []uint64{1, 0, 3}}, {"no", "#ff0000", []uint64{2, 0, 0}}, {"never", "#0000ff", []uint64{0, 0, 0}}, {"short", "#123456", []uint64{1}}},
	}.Draw()
	if err != nil {
		t.Fatal(err)
	}
	svg := string(f.SVG)
	for want, n := range map[string]int{`fill="#00ff00"`: 2, `fill="#ff0000"`: 1, `fill="#0000ff"`: 0, `fill="#123456"`: 1, "<rect": 4,
		`aria-label="a &lt;b&gt; chart"`: 1, ">requests per 1 s<": 1, ">time (UTC)<": 1, ">10:00:00<": 1, ">3<": 1} {
		if got := strings.Count(svg, want); got != n {
			t.Errorf("%q: %d in the SVG, want %d\n%s", want, got, n, svg)
		}
	}
	if got := []LegendItem{{"ok", "#00ff00"}, {"no", "#ff0000"}, {"short", "#123456"}}; !slices.Equal(f.Legend, got) {
		t.Errorf("legend %v", f.Legend)
	}
	html, err := f.HTML()
	if err != nil || !strings.Contains(string(html), `<figcaption>a &lt;b&gt; chart</figcaption>`) || !strings.Contains(string(html), "background: #00ff00") {
		t.Errorf("figure: %v\n%s", err, html)
	}
}

// A horizontal chart has a bar a name, the names escaped on the left.
func TestDrawHorizontal(t *testing.T) {
	f, err := Bars{Title: "sites", ValueLabel: "requests refused", Names: []string{"https://a.example", "<x>"},
		Series: []Series{{"refused", "#ff0000", []uint64{5, 1}}, {"would", "#ffa500", []uint64{2, 0}}}}.Draw()
	if err != nil {
		t.Fatal(err)
	}
	svg := string(f.SVG)
	for want, n := range map[string]int{"<rect": 3, ">https://a.example<": 1, ">&lt;x&gt;<": 1, ">requests refused<": 1, ">8<": 1} {
		if got := strings.Count(svg, want); got != n {
			t.Errorf("%q: %d in the SVG, want %d\n%s", want, got, n, svg)
		}
	}
}
