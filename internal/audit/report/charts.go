package report

import (
	"fmt"
	"sort"
	"time"

	"github.com/robotsproxy/robotsproxy/internal/chart"
)

// Series colours.
const (
	colAllowed     = "#2e7d32"
	colDenied      = "#c62828"
	colWouldDeny   = "#ef6c00"
	colNotDecided  = "#757575"
	colUnavailable = "#f9a825"
	colUnreachable = "#6a1b9a"
)

// maxHostBars is how many sites the "sites with the most refusals" chart
// shows.
const maxHostBars = 15

// charts draws the report's figures: the overview (decisions over time,
// access results over time when any line has one, sites by refusals when
// any was refused) and decisions over time per shown token. Each time
// chart is a stacked bar a bucket: a bucket with no request draws
// nothing, and nothing is drawn between buckets.
func charts(r *Report) (overview, perToken []chart.Figure, err error) {
	t := r.Timelines
	if t.Buckets == 0 {
		return nil, nil, nil
	}
	bucket := bucketName(t.BucketSeconds)
	timeChart := func(title string, ss ...chart.Series) chart.Bars {
		return chart.Bars{Title: title, Start: *t.Start, Step: time.Duration(t.BucketSeconds) * time.Second, Series: ss,
			ValueLabel: "requests per " + bucket, AcrossLabel: "time (UTC), one bar per " + bucket}
	}
	over := []chart.Bars{
		timeChart("Decisions over time, all crawlers", chart.Series{Name: "allowed", Color: colAllowed, Values: t.Decisions["allowed"]},
			chart.Series{Name: "refused", Color: colDenied, Values: t.Decisions["denied"]},
			chart.Series{Name: labelWouldDeny, Color: colWouldDeny, Values: t.Decisions["would_deny"]},
			chart.Series{Name: labelNotDecided, Color: colNotDecided, Values: t.Decisions["not_decided"]}),
		timeChart("robots.txt access when each request was decided",
			chart.Series{Name: "robots.txt fetched", Color: colAllowed, Values: t.Access["successful"]},
			chart.Series{Name: "unavailable", Color: colUnavailable, Values: t.Access["unavailable"]},
			chart.Series{Name: "unreachable", Color: colUnreachable, Values: t.Access["unreachable"]}),
	}
	if hb, ok := hostBars(r.Hosts.Rows); ok {
		over = append(over, hb)
	}
	var per []chart.Bars
	for _, ts := range t.Tokens {
		per = append(per, timeChart("Decisions over time: "+ts.Token, chart.Series{Name: "allowed", Color: colAllowed, Values: ts.Allowed},
			chart.Series{Name: "refused", Color: colDenied, Values: ts.Denied},
			chart.Series{Name: labelWouldDeny, Color: colWouldDeny, Values: ts.WouldDeny}))
	}
	if overview, err = draw(over); err != nil {
		return nil, nil, err
	}
	perToken, err = draw(per)
	return overview, perToken, err
}

// draw draws the charts that have data.
func draw(cs []chart.Bars) ([]chart.Figure, error) {
	var out []chart.Figure
	for _, c := range cs {
		f, err := c.Draw()
		if err != nil {
			return nil, err
		}
		if len(f.Legend) > 0 {
			out = append(out, f)
		}
	}
	return out, nil
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
func hostBars(rows []HostRow) (chart.Bars, bool) {
	var hs []HostRow
	for _, h := range rows {
		if h.Denied+h.WouldDeny > 0 {
			hs = append(hs, h)
		}
	}
	sort.SliceStable(hs, func(i, j int) bool { return hs[i].Denied+hs[i].WouldDeny > hs[j].Denied+hs[j].WouldDeny })
	hs = hs[:min(len(hs), maxHostBars)]
	c := chart.Bars{Title: "Sites with the most refusals", ValueLabel: "requests refused", Names: []string{},
		Series: []chart.Series{{Name: "refused", Color: colDenied}, {Name: labelWouldDeny, Color: colWouldDeny}}}
	for _, h := range hs {
		c.Names = append(c.Names, cut(h.Origin, 40))
		c.Series[0].Values = append(c.Series[0].Values, h.Denied)
		c.Series[1].Values = append(c.Series[1].Values, h.WouldDeny)
	}
	return c, len(hs) > 0
}
