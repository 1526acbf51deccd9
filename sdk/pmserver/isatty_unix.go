//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package pmserver

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal: whether the terminal settings
// can be read from it. A character device that is not a terminal, such as
// /dev/null, is not one.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlReadTermios)
	return err == nil
}
