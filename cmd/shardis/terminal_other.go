//go:build !linux && !darwin

package main

import "os"

// isTTY reports whether f is a character device (without the terminal
// ioctl of Linux and macOS, the nearest test).
func isTTY(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
