package report

import (
	"fmt"
	"strings"
	"testing"
)

// The summary's small tables keep at most maxSmallKeys keys, each of at
// most maxKeyLen octets; the rest count under "(other)".
func TestSmallBounds(t *testing.T) {
	long := strings.Repeat("r", 3*maxKeyLen)
	for _, c := range []struct {
		name  string
		keys  []string
		rows  int
		other uint64 // the "(other)" row's total; 0: no such row
		width int    // the longest key, octets
	}{
		{"100 distinct reasons", distinctKeys(100), maxSmallKeys + 1, 100 - maxSmallKeys, 8},
		{"64 distinct reasons: no (other)", distinctKeys(maxSmallKeys), maxSmallKeys, 0, 8},
		{"a long key is cut", []string{long, long + "x", "rule"}, 2, 0, maxKeyLen},
	} {
		t.Run(c.name, func(t *testing.T) {
			var s small
			for i, k := range c.keys {
				s.add([]byte(k), i%2)
			}
			rows := s.counts()
			var other uint64
			width := 0
			for _, r := range rows {
				if r.Key == otherKey {
					other = r.Total
				}
				width = max(width, len(r.Key))
			}
			if len(rows) != c.rows || other != c.other || width != c.width {
				t.Errorf("got %d rows, (other) %d, longest key %d octets; want %d, %d, %d", len(rows), other, width, c.rows, c.other, c.width)
			}
		})
	}
}

func distinctKeys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("reason%02d", i)
	}
	return out
}
