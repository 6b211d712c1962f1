package report

import (
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// stackedBars draws series stacked, one bar an index. Upright (a time
// chart) bar i spans [start+i*width, start+(i+1)*width) on the X axis, a
// bucket, less a gap when the bars are wide enough to show one;
// horizontal, bar i spans [i+start, i+start+width] on the Y axis (a
// nominal category). A zero draws nothing.
type stackedBars struct {
	start, width float64
	series       []series
	horizontal   bool
}

// top is the highest stack.
func (b *stackedBars) top() uint64 {
	var top uint64
	for i := range b.series[0].values {
		var n uint64
		for _, s := range b.series {
			n += s.values[i]
		}
		top = max(top, n)
	}
	return top
}

func (b *stackedBars) span(i int) (lo, hi float64) {
	if b.horizontal {
		return float64(i) + b.start, float64(i) + b.start + b.width
	}
	return b.start + float64(i)*b.width, b.start + float64(i+1)*b.width
}

// Plot implements plot.Plotter.
func (b *stackedBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	along, across := trX, trY // along: the bar's position axis
	if b.horizontal {
		along, across = trY, trX
	}
	for i := range b.series[0].values {
		lo, hi := b.span(i)
		a0, a1 := along(lo), along(hi)
		if gap := (a1 - a0) / 8; !b.horizontal && a1-a0 > 4 {
			a0, a1 = a0+gap, a1-gap
		}
		base := 0.0
		for _, s := range b.series {
			v := float64(s.values[i])
			if v == 0 {
				continue
			}
			c0, c1 := across(base), across(base+v)
			base += v
			var pts []vg.Point
			if b.horizontal {
				pts = []vg.Point{{X: c0, Y: a0}, {X: c1, Y: a0}, {X: c1, Y: a1}, {X: c0, Y: a1}}
			} else {
				pts = []vg.Point{{X: a0, Y: c0}, {X: a1, Y: c0}, {X: a1, Y: c1}, {X: a0, Y: c1}}
			}
			c.FillPolygon(s.color, c.ClipPolygonXY(pts))
		}
	}
}

// DataRange implements plot.DataRanger.
func (b *stackedBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	n := len(b.series[0].values)
	lo, _ := b.span(0)
	_, hi := b.span(n - 1)
	if b.horizontal {
		return 0, float64(b.top()), lo, hi
	}
	return lo, hi, 0, float64(b.top())
}

// countStep is the tick step of a count axis up to top: 1, 2 or 5 times
// a power of ten, giving at most five steps.
func countStep(top uint64) uint64 {
	step := uint64(1)
	for {
		for _, m := range []uint64{1, 2, 5} {
			if top <= 5*m*step {
				return m * step
			}
		}
		if step > math.MaxUint64/100 {
			return step
		}
		step *= 10
	}
}

// countAxis is where a count axis up to top ends: top rounded up to a
// whole step, at least 1, so that the top label is drawn.
func countAxis(top uint64) uint64 {
	step := countStep(top)
	return max((top+step-1)/step*step, 1)
}

// countTicks label a count axis at whole steps (see countStep), 0
// included: every axis has labels beyond 0.
type countTicks struct{}

// Ticks implements plot.Ticker.
func (countTicks) Ticks(lo, hi float64) []plot.Tick {
	step := countStep(uint64(math.Max(hi, 1)))
	var out []plot.Tick
	for v := uint64(0); float64(v) <= hi; v += step {
		if float64(v) >= lo {
			out = append(out, plot.Tick{Value: float64(v), Label: formatCount(v)})
		}
	}
	return out
}
