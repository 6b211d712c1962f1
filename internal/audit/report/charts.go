package report

import (
	"bytes"
	"fmt"
	"html"
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

// chart is one rendered figure: an inline <svg> element, its title, and
// its legend, which the page draws beside the SVG so that it never covers
// the data.
type chart struct {
	Title  string
	SVG    template.HTML
	Legend []legendItem
}

type legendItem struct{ Name, Color string }

var (
	colAllowed     = color.RGBA{R: 0x2e, G: 0x7d, B: 0x32, A: 0xff}
	colDenied      = color.RGBA{R: 0xc6, G: 0x28, B: 0x28, A: 0xff}
	colWouldDeny   = color.RGBA{R: 0xef, G: 0x6c, B: 0x00, A: 0xff}
	colNotDecided  = color.RGBA{R: 0x75, G: 0x75, B: 0x75, A: 0xff}
	colUnavailable = color.RGBA{R: 0xf9, G: 0xa8, B: 0x25, A: 0xff}
	colUnreachable = color.RGBA{R: 0x6a, G: 0x1b, B: 0x9a, A: 0xff}
)

// maxHostBars is how many sites the "sites with the most refusals" chart
// shows.
const maxHostBars = 15

type series struct {
	name   string
	values []uint64
	color  color.RGBA
}

func (s series) total() (n uint64) {
	for _, v := range s.values {
		n += v
	}
	return n
}

// withData drops the series that are zero throughout: no legend entry for
// what never happened.
func withData(ss []series) []series {
	var out []series
	for _, s := range ss {
		if s.total() > 0 {
			out = append(out, s)
		}
	}
	return out
}

func legendOf(ss []series) []legendItem {
	out := make([]legendItem, len(ss))
	for i, s := range ss {
		out[i] = legendItem{s.name, fmt.Sprintf("#%02x%02x%02x", s.color.R, s.color.G, s.color.B)}
	}
	return out
}

// charts draws the report's figures: the overview (decisions over time,
// access results over time when any line has one, sites by refusals when
// any was refused) and decisions over time per shown token. Each time
// chart is a stacked bar a bucket: a bucket with no request draws
// nothing, and nothing is drawn between buckets.
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
			{"allowed", t.Decisions["allowed"], colAllowed}, {"refused", t.Decisions["denied"], colDenied},
			{labelWouldDeny, t.Decisions["would_deny"], colWouldDeny}, {labelNotDecided, t.Decisions["not_decided"], colNotDecided}}},
		{"robots.txt access when each request was decided", []series{
			{"robots.txt fetched", t.Access["successful"], colAllowed}, {"unavailable", t.Access["unavailable"], colUnavailable},
			{"unreachable", t.Access["unreachable"], colUnreachable}}},
	}
	for _, ts := range t.Tokens {
		specs = append(specs, struct {
			title string
			s     []series
		}{"Decisions over time: " + ts.Token, []series{
			{"allowed", ts.Allowed, colAllowed}, {"refused", ts.Denied, colDenied}, {labelWouldDeny, ts.WouldDeny, colWouldDeny}}})
	}
	var out []chart
	for i, sp := range specs {
		ss := withData(sp.s)
		if len(ss) == 0 {
			if i == 1 {
				out = append(out, chart{}) // no access results: no chart
			}
			continue
		}
		svg, err := toSVG(timePlot(t, ss), sp.title, 600, 230)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, chart{Title: sp.title, SVG: svg, Legend: legendOf(ss)})
	}
	for _, c := range out[:2] {
		if c.SVG != "" {
			overview = append(overview, c)
		}
	}
	perToken = out[2:]
	if p, n, ss := hostBars(r.Hosts.Rows); n > 0 {
		svg, err := toSVG(p, "Sites with the most refusals", 600, vg.Length(70+18*n))
		if err != nil {
			return nil, nil, err
		}
		overview = append(overview, chart{Title: "Sites with the most refusals", SVG: svg, Legend: legendOf(ss)})
	}
	return overview, perToken, nil
}

// newPlot is a plot in Liberation Sans (metric-compatible with Arial,
// which the page names as its fallback). Its title is the page's
// figcaption, and its legend the page's.
func newPlot() *plot.Plot {
	p := plot.New()
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	for _, ax := range []*plot.Axis{&p.X, &p.Y} {
		ax.Label.TextStyle.Font = font.From(sans, 12)
		ax.Tick.Label.Font = font.From(sans, 11)
	}
	return p
}

// timePlot draws the series as stacked bars, one a time bucket, on a
// labelled time axis and count axis.
func timePlot(t Timelines, ss []series) *plot.Plot {
	p := newPlot()
	bucket := bucketName(t.BucketSeconds)
	p.Y.Label.Text = "requests per " + bucket
	p.X.Label.Text = "time (UTC), one bar per " + bucket
	start := float64(t.Start.Unix())
	p.X.Tick.Marker = timeTicks{}
	p.X.Min, p.X.Max = start, start+float64(int64(t.Buckets)*t.BucketSeconds)
	bars := &stackedBars{start: start, width: float64(t.BucketSeconds), series: ss}
	p.Y.Min, p.Y.Max = 0, float64(countAxis(bars.top()))
	p.Y.Tick.Marker = countTicks{}
	p.Add(plotter.NewGrid(), bars)
	return p
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

// hostBars is a horizontal stacked bar chart of the shown sites with the
// most refusals (refused, then would be refused), the most at the top.
func hostBars(rows []HostRow) (*plot.Plot, int, []series) {
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
	denied, would := make([]uint64, n), make([]uint64, n)
	names := make([]string, n)
	var top uint64
	for i, h := range hs {
		j := n - 1 - i // the largest on top
		denied[j], would[j], names[j] = h.Denied, h.WouldDeny, cut(h.Origin, 40)
		top = max(top, h.Denied+h.WouldDeny)
	}
	ss := withData([]series{{"refused", denied, colDenied}, {labelWouldDeny, would, colWouldDeny}})
	p := newPlot()
	p.X.Label.Text = "requests refused"
	p.X.Min, p.X.Max = 0, float64(countAxis(top))
	p.X.Tick.Marker = countTicks{}
	p.Add(plotter.NewGrid(), &stackedBars{start: -0.35, width: 0.7, series: ss, horizontal: true})
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(n)-0.4
	return p, n, ss
}

// toSVG renders p as an inline <svg> element w x h points, scaled by the
// page to its container's width, named title for screen readers.
func toSVG(p *plot.Plot, title string, w, h vg.Length) (template.HTML, error) {
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
	s = strings.Replace(s, "<svg ", `<svg class="chart" role="img" aria-label="`+html.EscapeString(title)+`" `, 1)
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "font-family:'Liberation Sans',Arial,Helvetica,sans-serif;")
	return template.HTML(s), nil //nolint:gosec // our own SVG, its text escaped by svgo
}
