package benchreport

import (
	"os"
	"syscall"
)

// maxRSSKiB returns the peak resident set size of an exited process; Linux
// reports it in KiB.
func maxRSSKiB(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return ru.Maxrss, true
}
