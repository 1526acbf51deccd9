//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package cli

import "os"

// isTerminal reports false: on this platform symposium-pm does not tell a
// terminal apart, so it shows no progress.
func isTerminal(f *os.File) bool { return false }
