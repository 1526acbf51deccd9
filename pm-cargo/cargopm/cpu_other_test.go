//go:build !unix

package cargopm_test

import "time"

// childCPU is not measured on this platform.
func childCPU() time.Duration { return 0 }
