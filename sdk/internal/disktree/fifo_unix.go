//go:build unix

package disktree

import (
	"syscall"
	"testing"
)

func mkfifo(_ testing.TB, path string) error {
	return syscall.Mkfifo(path, 0o644)
}
