//go:build !linux

package bench

import "time"

// preciseSleeper returns time.Sleep, which may wake up to a millisecond
// late (see the Linux version).
func preciseSleeper() func(time.Duration) { return time.Sleep }
