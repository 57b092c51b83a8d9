//go:build unix && !linux

package redistest

import (
	"syscall"
	"time"
)

// sysProcAttr puts redis-server in its own process group, so that signals
// sent to the terminal's group (Ctrl-C) reach only this process.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// waitState gives the signal a moment to take effect.
func waitState(pid int, stopped bool, timeout time.Duration) error {
	time.Sleep(10 * time.Millisecond)
	return nil
}
