package redistest

import (
	"bytes"
	"fmt"
	"os"
	"syscall"
	"time"
)

// sysProcAttr puts redis-server in its own process group, so that signals
// sent to the terminal's group (Ctrl-C) reach only this process, and asks
// the kernel to kill it if the thread that started it dies, so that no
// server outlives a crashed or killed test binary. (The kernel ties the
// signal to the starting thread; Go ends a thread only when a goroutine
// locked to it with runtime.LockOSThread exits, so do not start servers
// from such a goroutine.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitState waits until the kernel reports pid in the wanted state
// ('T' stopped, or anything else when stopped is false), so that Pause and
// Resume take effect before they return.
func waitState(pid int, stopped bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return nil // no /proc or the process is gone: nothing to wait for
		}
		// The state follows the command name, which is in parentheses.
		if i := bytes.LastIndexByte(data, ')'); i >= 0 && i+2 < len(data) {
			state := data[i+2]
			if (state == 'T' || state == 't') == stopped {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: process %d did not change state within %s", ErrTimeout, pid, timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
