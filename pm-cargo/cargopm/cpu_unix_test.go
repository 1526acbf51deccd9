//go:build unix

package cargopm_test

import (
	"syscall"
	"time"
)

// childCPU returns the user+system CPU time used so far by this process's
// terminated and waited-for children: the difference around one run is the
// run's CPU cost, which a busy shared machine distorts far less than wall
// time.
func childCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
