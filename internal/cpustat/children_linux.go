package cpustat

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// commLen is how many bytes of a command name the kernel keeps
// (TASK_COMM_LEN less its terminating zero): /proc/<pid>/stat shows the
// name cut there.
const commLen = 15

// clockTick is the unit of /proc/<pid>/stat CPU times (USER_HZ, 100 on
// every Linux platform Go supports).
const clockTick = 10 * time.Millisecond

// Children returns the CPU time (user plus system) used so far by the
// running child processes of this one whose command name is name (such as
// "redis-server": the servers a benchmark started), or 0 where the system
// does not tell. Subtracting two readings gives the servers' share of a
// workload; the resolution is 10 ms. A name longer than the kernel keeps
// (15 bytes) is compared by the part it keeps.
func Children(name string) time.Duration {
	if len(name) > commLen {
		name = name[:commLen]
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := strconv.Itoa(os.Getpid())
	var total time.Duration
	for _, path := range stats {
		data, err := os.ReadFile(path)
		if err != nil {
			continue // the process ended meanwhile
		}
		open, end := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
		if open < 0 || end < open || string(data[open+1:end]) != name {
			continue
		}
		// After the name: state ppid ... utime (the 12th) stime (13th).
		f := bytes.Fields(data[end+1:])
		if len(f) < 13 || string(f[1]) != self {
			continue
		}
		utime, err1 := strconv.ParseInt(string(f[11]), 10, 64)
		stime, err2 := strconv.ParseInt(string(f[12]), 10, 64)
		if err1 == nil && err2 == nil {
			total += time.Duration(utime+stime) * clockTick
		}
	}
	return total
}
