//go:build linux || darwin || dragonfly || freebsd || netbsd || openbsd

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// isTerminal reports whether f is a terminal: whether its terminal
// settings can be read. Being a character device is not enough (/dev/null
// is one).
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), readTermios)
	return err == nil
}
