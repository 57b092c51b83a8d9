package bench

import (
	"time"

	"github.com/shardis/shardis/internal/cpustat"
)

// ProcessCPU returns the CPU time (user plus system) this process has used
// so far, or 0 where the system does not tell. Benchmarks subtract two
// readings to report the client's own CPU cost per command, a figure that
// the load of other processes on the machine disturbs much less than
// elapsed time.
func ProcessCPU() time.Duration { return cpustat.Process() }

// ChildrenCPU returns the CPU time (user plus system) used so far by the
// running child processes of this one whose command name is name (such as
// "redis-server": the servers a benchmark started), or 0 where the system
// does not tell. Subtracting two readings gives the servers' share of a
// workload; the resolution is 10 ms.
func ChildrenCPU(name string) time.Duration { return cpustat.Children(name) }
