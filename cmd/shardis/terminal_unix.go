//go:build linux || darwin

package main

import (
	"os"
	"syscall"
	"unsafe"
)

// isTTY reports whether f is a terminal: the terminal ioctl answers on
// it. A character device is not enough: /dev/null is one too, and it is
// the stdin of a service under systemd, in a container without a
// terminal, or under cron, where no one answers a prompt.
func isTTY(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var errno syscall.Errno
	err = rc.Control(func(fd uintptr) {
		var t syscall.Termios
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, ioctlGetTermios, uintptr(unsafe.Pointer(&t)))
	})
	return err == nil && errno == 0
}
