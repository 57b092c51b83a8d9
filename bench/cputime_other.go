//go:build !unix

package bench

import "time"

// ProcessCPU returns 0: this system does not report the process's CPU time
// through the syscall package.
func ProcessCPU() time.Duration { return 0 }
