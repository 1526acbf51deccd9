//go:build !(linux || darwin || dragonfly || freebsd || netbsd || openbsd)

package pmserver

import "os"

// isTerminal reports false: on this platform the harness does not tell a
// terminal from other input, and prints no banner.
func isTerminal(f *os.File) bool { return false }
