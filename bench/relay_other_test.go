//go:build !linux

package bench

import (
	"os/exec"
	"time"
)

// preciseSleeper returns time.Sleep, which may wake up to a millisecond
// late (see the Linux version).
func preciseSleeper() func(time.Duration) { return time.Sleep }

// setDeathSignal does nothing: the benchmark's cleanup kills the relay.
func setDeathSignal(*exec.Cmd) {}
