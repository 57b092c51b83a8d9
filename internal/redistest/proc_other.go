//go:build !unix

package redistest

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

func sigTerm(p *os.Process) error { return p.Kill() }
func sigStop(p *os.Process) error {
	return fmt.Errorf("%w: pausing a process is not supported on this system", ErrInvalid)
}
func sigCont(p *os.Process) error {
	return fmt.Errorf("%w: resuming a process is not supported on this system", ErrInvalid)
}

func waitState(pid int, stopped bool, timeout time.Duration) error { return nil }
