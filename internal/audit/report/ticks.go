package report

import (
	"strconv"
	"time"

	"gonum.org/v1/plot"
)

func formatCount(v uint64) string { return strconv.FormatUint(v, 10) }

// timeTicks label Unix-second axes at round UTC times: the smallest step
// of the list giving at most 6 labels.
type timeTicks struct{}

func (timeTicks) Ticks(lo, hi float64) []plot.Tick {
	steps := []int64{1, 2, 5, 10, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 28 * 86400, 91 * 86400, 365 * 86400}
	span := int64(hi - lo)
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 6 {
			step = s
			break
		}
	}
	for span/step > 6 {
		step *= 2
	}
	format := "01-02 15:04"
	switch {
	case step < 60:
		format = "15:04:05"
	case step >= 365*86400:
		format = "2006"
	case step >= 86400:
		format = "2006-01-02"
	}
	var out []plot.Tick
	// The last label stops a twentieth of the span short of the edge,
	// where it would be cut.
	for v := floorDiv(int64(lo)+step-1, step) * step; float64(v) <= hi-float64(span)/20; v += step {
		out = append(out, plot.Tick{Value: float64(v), Label: time.Unix(v, 0).UTC().Format(format)})
	}
	return out
}
