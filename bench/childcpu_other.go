//go:build !linux

package bench

import "time"

// ChildrenCPU returns 0: only Linux's /proc tells a child process's CPU
// time while it runs.
func ChildrenCPU(name string) time.Duration { return 0 }
