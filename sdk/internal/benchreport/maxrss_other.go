//go:build !linux && !darwin

package benchreport

import "os"

// maxRSSKiB reports that the peak resident set size is not measured here.
func maxRSSKiB(ps *os.ProcessState) (int64, bool) { return 0, false }
