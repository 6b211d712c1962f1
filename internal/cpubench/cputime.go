package cpubench

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// CPUTime returns the CPU time process pid has spent so far: the sum over
// its threads of their time on a CPU, the first field of
// /proc/PID/task/TID/schedstat (nanoseconds; Linux only). A thread that
// exits while it is read is left out. The error says when there are no
// scheduler statistics for pid.
func CPUTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no scheduler statistics for process %d: %v", pid, err)
	}
	var sum int64
	for _, f := range tasks {
		data, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			ns, _ := strconv.ParseInt(fields[0], 10, 64)
			sum += ns
		}
	}
	return time.Duration(sum), nil
}
