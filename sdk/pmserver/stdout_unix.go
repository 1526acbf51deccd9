//go:build unix

package pmserver

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// redirectStdout duplicates descriptor 1 for the protocol and makes
// descriptor 1 a copy of descriptor 2.
func redirectStdout() (*os.File, error) {
	fd, err := unix.FcntlInt(1, unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil, fmt.Errorf("duplicating stdout: %w", err)
	}
	if err := unix.Dup2(2, 1); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("pointing stdout at stderr: %w", err)
	}
	return os.NewFile(uintptr(fd), "protocol-stdout"), nil
}
