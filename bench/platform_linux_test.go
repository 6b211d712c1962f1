package bench

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// preciseSleeper returns a sleep for the calling goroutine that wakes
// within tens of microseconds of its time: the goroutine keeps an OS
// thread of its own (ended with it), with a timer slack of 1 ns, and
// sleeps in clock_nanosleep. time.Sleep would wake up to a millisecond
// late whenever the runtime's threads are idle: they wait for timers in
// epoll_wait, whose timeout is in whole milliseconds.
func preciseSleeper() func(time.Duration) {
	runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
	const prSetTimerSlack = 29
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	return func(d time.Duration) {
		if d <= 0 {
			return
		}
		ts := syscall.NsecToTimespec(d.Nanoseconds())
		for syscall.Nanosleep(&ts, &ts) == syscall.EINTR {
		}
	}
}

// setDeathSignal makes cmd end with the benchmark that started it.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// processCPU returns the CPU time this process has used (user and system).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuTimes is the machine's idle and total CPU time from /proc/stat, in
// clock ticks.
type cpuTimes struct{ idle, total int64 }

// machineIdle reads the machine's CPU times.
func machineIdle() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	var t cpuTimes
	for i, v := range strings.Fields(line)[1:] {
		n, _ := strconv.ParseInt(v, 10, 64)
		t.total += n
		if i == 3 || i == 4 { // idle, iowait
			t.idle += n
		}
	}
	return t
}

// since returns the idle share of the machine's CPU time since t (0 to 1).
func (t cpuTimes) since() float64 {
	now := machineIdle()
	if now.total <= t.total {
		return 0
	}
	return float64(now.idle-t.idle) / float64(now.total-t.total)
}
