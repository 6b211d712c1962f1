package main

import (
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// pinSelf pins every thread of this process to cpus (nil: every CPU of
// the machine). Threads started later inherit the affinity of the thread
// that starts them, so all of them are covered once every present one
// is; it is done twice in case one was started meanwhile.
func pinSelf(cpus []int) error {
	var set unix.CPUSet
	if cpus == nil {
		for i := range numCPU() {
			set.Set(i)
		}
	}
	for _, c := range cpus {
		set.Set(c)
	}
	for range 2 {
		tasks, err := filepath.Glob("/proc/self/task/*")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(filepath.Base(t))
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && !os.IsNotExist(err) && err != unix.ESRCH {
				return err
			}
		}
	}
	return nil
}

// numCPU is the number of CPUs online, whatever this process's affinity.
func numCPU() int {
	n, err := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*")
	if err != nil || len(n) == 0 {
		return 1
	}
	online := 0
	for _, c := range n {
		data, err := os.ReadFile(filepath.Join(c, "online"))
		if err != nil || len(data) > 0 && data[0] == '1' { // cpu0 has no "online" file
			online++
		}
	}
	return online
}
