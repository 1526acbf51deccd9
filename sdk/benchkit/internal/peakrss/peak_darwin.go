package main

import (
	"os"
	"syscall"
)

// peakKiB is the exited process's peak resident set size; macOS reports
// it in bytes.
func peakKiB(st *os.ProcessState) int64 {
	if ru, ok := st.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss / 1024
	}
	return 0
}
