package report

// maxBuckets bounds a timeline: when the time span seen needs more buckets
// of the current width, the width grows to the next step and neighbouring
// buckets merge. A timeline is at most maxBuckets*4 counters.
const maxBuckets = 240

// Timeline bucket widths in seconds: 1s, 5s, 15s, 30s, 1m, 5m, 15m, 30m, 1h,
// 3h, 6h, 12h, 1d, 7d, then four times the one before: the narrowest that
// fits the span in maxBuckets, so that a log of a few seconds still draws. Each divides the next, and buckets
// are aligned to multiples of their width from the Unix epoch, so buckets
// of one width nest exactly in buckets of a wider one.
var bucketWidths = [...]int64{1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 7 * 86400}

func nextWidth(w int64) int64 {
	for _, x := range bucketWidths {
		if x > w {
			return x
		}
	}
	return 4 * w
}

// timeline counts events into time buckets, four counters a bucket whose
// meaning the caller chooses (see the slot constants).
type timeline struct {
	width  int64 // seconds; 0 while empty
	origin int64 // Unix seconds of bucket 0, a multiple of width
	b      [][4]uint64
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// heapBytes is the heap octets the timeline owns.
func (t *timeline) heapBytes() int { return 32 * cap(t.b) }

// add counts one event at Unix second ts in counter slot (0 to 3).
func (t *timeline) add(ts int64, slot int) {
	if t.width == 0 {
		t.width = bucketWidths[0]
		t.origin = floorDiv(ts, t.width) * t.width
	}
	for {
		i := floorDiv(ts-t.origin, t.width)
		switch {
		case i >= 0 && i < int64(len(t.b)):
			t.b[i][slot]++
			return
		case i >= 0 && i < maxBuckets:
			t.b = append(t.b, make([][4]uint64, int(i)+1-len(t.b))...)
		case i < 0 && int64(len(t.b))-i <= maxBuckets:
			nb := make([][4]uint64, int64(len(t.b))-i, maxBuckets)
			copy(nb[-i:], t.b)
			t.b, t.origin = nb, t.origin+i*t.width
		default:
			t.widen(nextWidth(t.width))
		}
	}
}

// widen merges the buckets into buckets of width w, a multiple of t.width.
func (t *timeline) widen(w int64) {
	if t.width == 0 || w <= t.width {
		return
	}
	t.b, t.origin = t.rebin(w, floorDiv(t.origin, w)*w), floorDiv(t.origin, w)*w
	t.width = w
}

// rebin returns the counts in buckets of width w (a multiple of t.width)
// starting at origin (a multiple of w), as many buckets as reach the last
// non-empty one; events before origin are dropped.
func (t *timeline) rebin(w, origin int64) [][4]uint64 {
	var out [][4]uint64
	for i := range t.b {
		if t.b[i] == ([4]uint64{}) {
			continue
		}
		j := floorDiv(t.origin+int64(i)*t.width-origin, w)
		if j < 0 {
			continue
		}
		for int64(len(out)) <= j {
			out = append(out, [4]uint64{})
		}
		for s := range 4 {
			out[j][s] += t.b[i][s]
		}
	}
	return out
}

// grid is the common bucketing of several timelines: the widest width
// among them and the span of all their events.
type grid struct {
	Width  int64
	Origin int64
	N      int
}

func commonGrid(ts ...*timeline) grid {
	var g grid
	for _, t := range ts {
		if t.width > g.Width {
			g.Width = t.width
		}
	}
	if g.Width == 0 {
		return g
	}
	first, last, any := int64(0), int64(0), false
	for _, t := range ts {
		for i := range t.b {
			if t.b[i] == ([4]uint64{}) {
				continue
			}
			s := t.origin + int64(i)*t.width
			if !any || s < first {
				first = s
			}
			if !any || s > last {
				last = s
			}
			any = true
		}
	}
	if !any {
		return grid{}
	}
	g.Origin = floorDiv(first, g.Width) * g.Width
	g.N = int(floorDiv(last-g.Origin, g.Width)) + 1
	return g
}

// on returns t's counts on grid g, exactly g.N buckets.
func (t *timeline) on(g grid) [][4]uint64 {
	out := make([][4]uint64, g.N)
	if t.width == 0 || g.Width == 0 {
		return out
	}
	copy(out, t.rebin(g.Width, g.Origin))
	return out
}
