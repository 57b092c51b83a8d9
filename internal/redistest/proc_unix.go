//go:build unix

package redistest

import (
	"os"
	"syscall"
)

func sigTerm(p *os.Process) error { return p.Signal(syscall.SIGTERM) }
func sigStop(p *os.Process) error { return p.Signal(syscall.SIGSTOP) }
func sigCont(p *os.Process) error { return p.Signal(syscall.SIGCONT) }
