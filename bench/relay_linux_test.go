package bench

import (
	"os/exec"
	"runtime"
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
