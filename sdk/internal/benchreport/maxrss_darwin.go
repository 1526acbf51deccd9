package benchreport

import (
	"os"
	"syscall"
)

// maxRSSKiB returns the peak resident set size of an exited process; macOS
// reports it in bytes.
func maxRSSKiB(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return ru.Maxrss / 1024, true
}
