package report

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// chart is one rendered figure: an inline <svg> element.
type chart struct {
	Title string
	SVG   template.HTML
}

var (
	colAllowed     = color.RGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0xff}
	colDenied      = color.RGBA{R: 0xc6, G: 0x28, B: 0x28, A: 0xff}
	colWouldDeny   = color.RGBA{R: 0xef, G: 0x6c, B: 0x00, A: 0xff}
	colNotDecided  = color.RGBA{R: 0x75, G: 0x75, B: 0x75, A: 0xff}
	colUnavailable = color.RGBA{R: 0xf9, G: 0xa8, B: 0x25, A: 0xff}
	colUnreachable = color.RGBA{R: 0x6a, G: 0x1b, B: 0x9a, A: 0xff}
)

// maxHostBars is how many hosts the "top hosts by denials" chart shows.
const maxHostBars = 15

type series struct {
	name   string
	values []uint64
	color  color.Color
}

// charts draws the report's figures: the overview (decisions over time,
// access results over time, top hosts by denials) and decisions over time
// per shown token.
func charts(r *Report) (overview, perToken []chart, err error) {
	t := r.Timelines
	if t.Buckets == 0 {
		return nil, nil, nil
	}
	specs := []struct {
		title string
		s     []series
	}{
		{"Decisions over time, all crawlers", []series{
			{"allowed", t.Decisions["allowed"], colAllowed}, {"denied", t.Decisions["denied"], colDenied},
			{"would deny (report mode)", t.Decisions["would_deny"], colWouldDeny}, {"not decided", t.Decisions["not_decided"], colNotDecided}}},
		{"Access results over time", []series{
			{"successful", t.Access["successful"], colAllowed}, {"unavailable", t.Access["unavailable"], colUnavailable},
			{"unreachable", t.Access["unreachable"], colUnreachable}}},
	}
	for _, ts := range t.Tokens {
		specs = append(specs, struct {
			title string
			s     []series
		}{"Decisions over time: " + ts.Token, []series{
			{"allowed", ts.Allowed, colAllowed}, {"denied", ts.Denied, colDenied}, {"would deny", ts.WouldDeny, colWouldDeny}}})
	}
	var out []chart
	for _, sp := range specs {
		p, err := timePlot(sp.title, t, sp.s)
		if err != nil {
			return nil, nil, err
		}
		svg, err := toSVG(p, 600, 220)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, chart{Title: sp.title, SVG: svg})
	}
	overview, perToken = out[:2:2], out[2:]
	if p, n, err := hostBars(r.Hosts.Rows); err != nil {
		return nil, nil, err
	} else if n > 0 {
		svg, err := toSVG(p, 600, vg.Length(60+18*n))
		if err != nil {
			return nil, nil, err
		}
		overview = append(overview, chart{Title: "Top hosts by denials", SVG: svg})
	}
	return overview, perToken, nil
}

// newPlot is a plot in Liberation Sans (metric-compatible with Arial,
// which the page names as its fallback).
func newPlot(title string) *plot.Plot {
	p := plot.New()
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(sans, 12)
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 10)
		ax.Tick.Label.Font = font.From(sans, 9)
	}
	p.Legend.TextStyle.Font = font.From(sans, 9)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(10)
	return p
}

func timePlot(title string, t Timelines, ss []series) (*plot.Plot, error) {
	p := newPlot(title)
	p.Y.Label.Text = fmt.Sprintf("requests per %s", bucketName(t.BucketSeconds))
	p.Y.Min = 0
	p.Y.Tick.Marker = intTicks{}
	start := t.Start.Unix()
	p.X.Tick.Marker = timeTicks{}
	// One bucket still spans its width, so that its points are drawn.
	p.X.Min, p.X.Max = float64(start), float64(start+int64(max(t.Buckets-1, 1))*t.BucketSeconds)
	p.Add(plotter.NewGrid())
	top := uint64(1)
	for _, s := range ss {
		for _, v := range s.values {
			top = max(top, v)
		}
	}
	p.Y.Max = float64(top) * 1.35 // room for the legend above the lines
	for _, s := range ss {
		xy := make(plotter.XYs, len(s.values))
		for i, v := range s.values {
			xy[i] = plotter.XY{X: float64(start + int64(i)*t.BucketSeconds), Y: float64(v)}
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, fmt.Errorf("chart %q: %w", title, err)
		}
		l.Color, l.Width = s.color, vg.Points(1.5)
		pts.Color, pts.Radius = s.color, vg.Points(1)
		if len(xy) > 30 {
			pts.Radius = 0
		}
		p.Add(l, pts)
		p.Legend.Add(s.name, l)
	}
	return p, nil
}

func bucketName(sec int64) string {
	switch {
	case sec%86400 == 0:
		return fmt.Sprintf("%d d", sec/86400)
	case sec%3600 == 0:
		return fmt.Sprintf("%d h", sec/3600)
	case sec%60 == 0:
		return fmt.Sprintf("%d min", sec/60)
	}
	return fmt.Sprintf("%d s", sec)
}

// hostBars is a horizontal stacked bar chart of the shown hosts with the
// most denials (denied, then would deny), the most at the top.
func hostBars(rows []HostRow) (*plot.Plot, int, error) {
	var hs []HostRow
	for _, h := range rows {
		if h.Denied+h.WouldDeny > 0 {
			hs = append(hs, h)
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Denied+hs[i].WouldDeny > hs[j].Denied+hs[j].WouldDeny })
	if len(hs) > maxHostBars {
		hs = hs[:maxHostBars]
	}
	if len(hs) == 0 {
		return nil, 0, nil
	}
	n := len(hs)
	denied, would := make(plotter.Values, n), make(plotter.Values, n)
	names := make([]string, n)
	for i, h := range hs {
		j := n - 1 - i // the largest on top
		denied[j], would[j], names[j] = float64(h.Denied), float64(h.WouldDeny), cut(h.Host, 40)
	}
	p := newPlot("Top hosts by denials")
	p.X.Label.Text = "requests denied"
	p.X.Min = 0
	p.X.Tick.Marker = intTicks{}
	w := vg.Points(11)
	b1, err := plotter.NewBarChart(denied, w)
	if err != nil {
		return nil, 0, err
	}
	b2, err := plotter.NewBarChart(would, w)
	if err != nil {
		return nil, 0, err
	}
	for _, b := range []*plotter.BarChart{b1, b2} {
		b.Horizontal = true
		b.LineStyle.Width = 0
	}
	b1.Color, b2.Color = colDenied, colWouldDeny
	b2.StackOn(b1)
	p.Add(plotter.NewGrid(), b1, b2)
	p.Legend.Add("denied", b1)
	p.Legend.Add("would deny", b2)
	p.Legend.Left, p.Legend.Top, p.Legend.XOffs = false, false, 0
	p.NominalY(names...)
	return p, n, nil
}

// toSVG renders p as an inline <svg> element w x h points, scaled by the
// page to its container's width.
func toSVG(p *plot.Plot, w, h vg.Length) (template.HTML, error) {
	c := vgsvg.New(w, h)
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := c.WriteTo(&buf); err != nil {
		return "", fmt.Errorf("chart: %w", err)
	}
	s := buf.String()
	if i := strings.Index(s, "<svg"); i >= 0 {
		s = s[i:] // drop the XML prolog: the element goes inside HTML
	}
	s = strings.Replace(s, "<svg ", `<svg class="chart" role="img" `, 1)
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return template.HTML(s), nil //nolint:gosec // our own SVG, its text escaped by svgo
}
