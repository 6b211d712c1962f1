package chart

import (
	"math"
	"time"
)

// countStep is the tick step of a count axis up to top: 1, 2 or 5 times a
// power of ten, giving at most five steps.
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

// countAxis is where a count axis up to top ends: top rounded up to a whole
// step, at least 1, so that the top label is drawn.
func countAxis(top uint64) uint64 {
	step := countStep(top)
	return max((top+step-1)/step*step, 1)
}

// countTicks are the labels of a count axis ending at end (a countAxis value):
// every step from 0, so that every axis has labels beyond 0.
func countTicks(end uint64) []uint64 {
	step := countStep(end)
	var out []uint64
	for v := uint64(0); v <= end; v += step {
		out = append(out, v)
		if v > end-step {
			break
		}
	}
	return out
}

// timeSteps are the steps of a time axis, in seconds.
var timeSteps = []int64{1, 2, 5, 10, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600,
	86400, 2 * 86400, 7 * 86400, 28 * 86400, 91 * 86400, 365 * 86400}

type timeTick struct {
	at    int64 // Unix seconds
	label string
}

// timeTicks label the Unix-second span [lo, hi] at round UTC times: the
// smallest step of timeSteps giving at most 6 labels, written as the step
// needs ("15:04:05", "01-02 15:04", "2006-01-02", "2006"). The last label
// stops a twentieth of the span short of the edge, where it would be cut.
func timeTicks(lo, hi int64) []timeTick {
	span := hi - lo
	step := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
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
	var out []timeTick
	first := lo + step - 1
	first -= ((first % step) + step) % step // floored to a multiple of step
	for v := first; float64(v) <= float64(hi)-float64(span)/20; v += step {
		out = append(out, timeTick{v, time.Unix(v, 0).UTC().Format(format)})
	}
	return out
}
