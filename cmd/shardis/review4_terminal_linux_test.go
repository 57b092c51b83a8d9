package main

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIsTerminal checks what reshard takes for a terminal (a prompt, a
// bar redrawn in place): a pseudo-terminal is one; /dev/null, a pipe and
// a file are not.
func TestIsTerminal(t *testing.T) {
	_, pts := openPTY(t)
	assert.True(t, isTerminal(pts), "a pseudo-terminal")

	null, err := os.Open(os.DevNull)
	require.NoError(t, err)
	defer null.Close()
	assert.False(t, isTerminal(null), "/dev/null")
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.False(t, isTerminal(r), "a pipe")
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	require.NoError(t, err)
	defer f.Close()
	assert.False(t, isTerminal(f), "a file")
	assert.False(t, isTerminal(os.Stdin.Name()), "not a file at all")
}

// openPTY opens a pseudo-terminal (closed when t ends), or skips t where
// there is none.
func openPTY(t *testing.T) (ptmx, pts *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock int32
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock)))
	require.Zero(t, errno, "unlockpt")
	var n uint32
	_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n)))
	require.Zero(t, errno, "ptsname")
	pts, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	require.NoError(t, err)
	t.Cleanup(func() { pts.Close() })
	return ptmx, pts
}
