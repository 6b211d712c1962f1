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

// processCPU returns 0: the benchmark reports no CPU per request here.
func processCPU() time.Duration { return 0 }

// cpuTimes is the machine's CPU times, unknown here.
type cpuTimes struct{}

func machineIdle() cpuTimes { return cpuTimes{} }

// since returns 0: unknown.
func (cpuTimes) since() float64 { return 0 }
