//go:build unix

package npmpm

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with that id exists (signal 0
// checks without sending anything; EPERM means it exists as another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
