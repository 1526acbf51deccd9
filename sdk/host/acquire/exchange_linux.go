//go:build linux

package acquire

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange atomically swaps the directories a and b.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if err == unix.ENOSYS || err == unix.EINVAL {
		return errors.ErrUnsupported
	}
	return err
}
