package main

import (
	"os"
	"syscall"
)

// peakKiB is the exited process's peak resident set size; Linux reports
// it in KiB.
func peakKiB(st *os.ProcessState) int64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss
	}
	return 0
}
