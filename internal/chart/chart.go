// Package chart draws the HTML reports' charts: stacked bar charts as
// inline SVG written through html/template, so that every name from a log
// is escaped, with the legend in HTML under the chart, where it wraps and
// never covers the data. The SVG loads nothing: no font (its text takes
// the page's), no script, no image.
package chart

import (
	"fmt"
	"html/template"
	"strings"
	"time"
	"unicode/utf8"
)

// Series is one colour of a stacked bar chart: Values[i] is its part of
// bar i.
type Series struct {
	Name   string
	Color  string // a CSS colour, "#rrggbb"
	Values []uint64
}

// Bars is a stacked bar chart, one bar an index of the series' Values,
// the series stacked in their order. It is a time chart, bar i spanning
// [Start+i*Step, Start+(i+1)*Step) on an axis labelled at round UTC
// times, or, when Names is set, a horizontal chart with one bar a name,
// the first at the top. A zero draws nothing.
type Bars struct {
	Title string // the chart's caption and accessible name
	// ValueLabel and AcrossLabel name the value axis and the time axis,
	// with their units ("requests per 1 h", "time (UTC)").
	ValueLabel, AcrossLabel string
	Start                   time.Time
	Step                    time.Duration
	Names                   []string
	Series                  []Series
}

// Figure is a drawn chart: its caption, its <svg> element and its legend
// (the series that have a bar).
type Figure struct {
	Title  string
	SVG    template.HTML
	Legend []LegendItem
}

// LegendItem is one series in the legend.
type LegendItem struct{ Name, Color string }

// HTML is the figure as one <figure> element: caption, chart and legend.
func (f Figure) HTML() (template.HTML, error) {
	var b strings.Builder
	if err := tmpl.ExecuteTemplate(&b, "figure", f); err != nil {
		return "", fmt.Errorf("chart %q: %w", f.Title, err)
	}
	return template.HTML(b.String()), nil //nolint:gosec // html/template escaped it
}

// CSS styles figures in a page: the chart takes its container's width,
// keeping a legible width on a phone (the figure scrolls sideways).
const CSS = template.CSS(`svg.chart { width: 100%; height: auto; display: block; }
figure.chart { overflow-x: auto; }
figure.chart figcaption { font-size: 13px; font-weight: bold; margin: 2px 4px 4px; }
.legend { font-size: 12px; margin: 4px; display: flex; flex-wrap: wrap; gap: 4px 14px; }
.legend i { display: inline-block; width: 11px; height: 11px; margin-right: 4px; vertical-align: -1px; border-radius: 2px; }
@media (max-width: 600px) { svg.chart { min-width: 460px; } }`)

// chartWidth is a chart's width in SVG units (CSS pixels at its natural size).
const chartWidth = 600

// Sizes, in SVG units: a time chart's height, a horizontal chart's row
// height, the text sizes, and the width of a character, estimated (the SVG
// takes the page's font, unknown here) for the room labels take.
const (
	timeHeight = 230
	rowHeight  = 18
	tickSize   = 11
	labelSize  = 12
	charWidth  = 0.6 * tickSize
)

// Draw lays the chart out and renders it. Series that are zero throughout
// are left out, of the chart and of its legend. The error is a template
// error.
func (c Bars) Draw() (Figure, error) {
	var ss []Series
	for _, s := range c.Series {
		if total(s.Values) > 0 {
			ss = append(ss, s)
		}
	}
	c.Series = ss
	fig := Figure{Title: c.Title}
	for _, s := range ss {
		fig.Legend = append(fig.Legend, LegendItem{s.Name, s.Color})
	}
	var p plot
	if c.Names != nil {
		p = c.horizontal()
	} else {
		p = c.upright()
	}
	p.Title = c.Title
	var b strings.Builder
	if err := tmpl.ExecuteTemplate(&b, "svg", p); err != nil {
		return Figure{}, fmt.Errorf("chart %q: %w", c.Title, err)
	}
	fig.SVG = template.HTML(b.String()) //nolint:gosec // html/template escaped it
	return fig, nil
}

// plot is a laid-out chart: what the SVG template draws.
type plot struct {
	Title          string
	W, H           float64
	X0, Y0, X1, Y1 float64 // the plotting area: left, top, right, bottom
	Grid           []line
	Bars           []rect
	Text           []text
}

type line struct{ X1, Y1, X2, Y2 float64 }

type rect struct {
	X, Y, W, H float64
	Fill       string
}

// text is a label at (X, Y); Anchor is start, middle or end; Turn turns
// it upright (a vertical axis' label).
type text struct {
	X, Y   float64
	Anchor string
	Size   int
	Turn   bool
	S      string
}

// upright lays out a time chart.
func (c Bars) upright() plot {
	n := bars(c.Series)
	top := countAxis(stackTop(c.Series, n))
	// The value labels, right-aligned against the axis, leave room for
	// the axis' name, turned upright, on their left.
	room := 26 + charWidth*float64(len(fmt.Sprint(top)))
	p := plot{W: chartWidth, H: timeHeight, X0: max(room, 48), Y0: 8, X1: chartWidth - 14, Y1: timeHeight - 38}
	y := func(v uint64) float64 { return p.Y1 - float64(v)/float64(top)*(p.Y1-p.Y0) }
	for _, v := range countTicks(top) {
		p.Grid = append(p.Grid, line{p.X0, y(v), p.X1, y(v)})
		p.Text = append(p.Text, text{X: p.X0 - 5, Y: y(v) + 4, Anchor: "end", Size: tickSize, S: fmt.Sprint(v)})
	}
	step := max(int64(c.Step/time.Second), 1)
	lo := c.Start.Unix()
	hi := lo + int64(n)*step
	x := func(t int64) float64 { return p.X0 + float64(t-lo)/float64(hi-lo)*(p.X1-p.X0) }
	for _, t := range timeTicks(lo, hi) {
		p.Grid = append(p.Grid, line{x(t.at), p.Y0, x(t.at), p.Y1})
		p.Text = append(p.Text, text{X: x(t.at), Y: p.Y1 + 15, Anchor: "middle", Size: tickSize, S: t.label})
	}
	width := (p.X1 - p.X0) / float64(n)
	gap := 0.0
	if width > 4 {
		gap = width / 8
	}
	for i := range n {
		base := uint64(0)
		for _, s := range c.Series {
			if v := at(s.Values, i); v > 0 {
				p.Bars = append(p.Bars, rect{X: p.X0 + float64(i)*width + gap, Y: y(base + v), W: max(width-2*gap, 1), H: y(base) - y(base+v), Fill: s.Color})
				base += v
			}
		}
	}
	p.Text = append(p.Text,
		text{X: (p.X0 + p.X1) / 2, Y: p.H - 6, Anchor: "middle", Size: labelSize, S: c.AcrossLabel},
		text{X: -(p.Y0 + p.Y1) / 2, Y: 14, Anchor: "middle", Size: labelSize, Turn: true, S: c.ValueLabel})
	return p
}

// horizontal lays out a chart of one bar a name, the names on the left.
func (c Bars) horizontal() plot {
	n := len(c.Names)
	longest := 0
	for _, name := range c.Names {
		longest = max(longest, utf8.RuneCountInString(name))
	}
	// The names are right-aligned against the axis, in at most 45% of
	// the chart.
	room := min(float64(longest)*charWidth+12, 0.45*chartWidth)
	p := plot{W: chartWidth, H: float64(52 + rowHeight*max(n, 1)), X0: room, Y0: 8, X1: chartWidth - 20}
	p.Y1 = p.H - 44
	top := countAxis(stackTop(c.Series, n))
	x := func(v uint64) float64 { return p.X0 + float64(v)/float64(top)*(p.X1-p.X0) }
	for _, v := range countTicks(top) {
		p.Grid = append(p.Grid, line{x(v), p.Y0, x(v), p.Y1})
		p.Text = append(p.Text, text{X: x(v), Y: p.Y1 + 15, Anchor: "middle", Size: tickSize, S: fmt.Sprint(v)})
	}
	row := (p.Y1 - p.Y0) / float64(max(n, 1))
	for i, name := range c.Names {
		y0 := p.Y0 + float64(i)*row
		p.Text = append(p.Text, text{X: p.X0 - 5, Y: y0 + row/2 + 4, Anchor: "end", Size: tickSize, S: name})
		base := uint64(0)
		for _, s := range c.Series {
			if v := at(s.Values, i); v > 0 {
				p.Bars = append(p.Bars, rect{X: x(base), Y: y0 + 0.15*row, W: x(base+v) - x(base), H: 0.7 * row, Fill: s.Color})
				base += v
			}
		}
	}
	p.Text = append(p.Text, text{X: (p.X0 + p.X1) / 2, Y: p.H - 8, Anchor: "middle", Size: labelSize, S: c.ValueLabel})
	return p
}

func total(vs []uint64) (n uint64) {
	for _, v := range vs {
		n += v
	}
	return n
}

// bars is the number of bars: the longest series.
func bars(ss []Series) int {
	n := 0
	for _, s := range ss {
		n = max(n, len(s.Values))
	}
	return max(n, 1)
}

// stackTop is the highest stack of the first n bars.
func stackTop(ss []Series, n int) uint64 {
	var top uint64
	for i := range n {
		var sum uint64
		for _, s := range ss {
			sum += at(s.Values, i)
		}
		top = max(top, sum)
	}
	return top
}

// at is vs[i], 0 past its end.
func at(vs []uint64, i int) uint64 {
	if i < len(vs) {
		return vs[i]
	}
	return 0
}

var tmpl = template.Must(template.New("chart").Funcs(template.FuncMap{
	"f": func(v float64) string { return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0") },
}).Parse(`{{define "svg"}}<svg class="chart" role="img" aria-label="{{.Title}}" xmlns="http://www.w3.org/2000/svg" width="{{f .W}}" height="{{f .H}}" viewBox="0 0 {{f .W}} {{f .H}}">
<g stroke="#e0e0e0">{{range .Grid}}<line x1="{{f .X1}}" y1="{{f .Y1}}" x2="{{f .X2}}" y2="{{f .Y2}}"/>{{end}}</g>
{{range .Bars}}<rect x="{{f .X}}" y="{{f .Y}}" width="{{f .W}}" height="{{f .H}}" fill="{{.Fill}}"/>
{{end}}<path d="M{{f .X0}} {{f .Y0}}V{{f .Y1}}H{{f .X1}}" fill="none" stroke="#616161"/>
<g fill="#212121">{{range .Text}}<text x="{{f .X}}" y="{{f .Y}}" font-size="{{.Size}}" text-anchor="{{.Anchor}}"{{if .Turn}} transform="rotate(-90)"{{end}}>{{.S}}</text>{{end}}</g>
</svg>{{end}}
{{define "figure"}}<figure class="chart"><figcaption>{{.Title}}</figcaption>{{.SVG}}
{{if .Legend}}<div class="legend">{{range .Legend}}<span><i style="background: {{.Color}}"></i>{{.Name}}</span>{{end}}</div>{{end}}</figure>{{end}}`))
