//go:build !unix

package cargopm

import "os"

// newProbeDir makes a probe directory under base; release removes it.
func newProbeDir(base string) (dir string, release func(), err error) {
	dir, err = os.MkdirTemp(base, "probe-")
	if err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// probeAbandoned reports whether the probe directory dir is older than
// staleProbe (without file locks, age is the only sign of a dead owner).
func probeAbandoned(dir string, old bool) bool { return old }
