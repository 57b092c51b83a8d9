//go:build !unix

package cpustat

import "time"

// Process returns 0: this system does not report the process's CPU time
// through the syscall package.
func Process() time.Duration { return 0 }
