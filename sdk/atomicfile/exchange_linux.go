//go:build linux

package atomicfile

import (
	"errors"

	"golang.org/x/sys/unix"
)

// exchange swaps the directory entries a and b in one step.
func exchange(a, b string) error {
	err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EINVAL) {
		return errors.ErrUnsupported
	}
	return err
}
