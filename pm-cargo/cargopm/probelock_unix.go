//go:build unix

package cargopm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// newProbeDir makes a probe directory under base that carries a lock held
// for the life of this process's use of it: the lock file is locked before
// it is renamed into the directory, so another process never sees it
// unlocked while its owner lives. release removes the directory.
func newProbeDir(base string) (dir string, release func(), err error) {
	lf, err := os.CreateTemp(base, ".probe-lock-")
	if err != nil {
		return "", nil, err
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		lf.Close()
		os.Remove(lf.Name())
		return "", nil, err
	}
	dir, err = os.MkdirTemp(base, "probe-")
	if err == nil {
		err = os.Rename(lf.Name(), filepath.Join(dir, ".lock"))
	}
	if err != nil {
		lf.Close()
		os.Remove(lf.Name())
		if dir != "" {
			os.RemoveAll(dir)
		}
		return "", nil, err
	}
	return dir, func() {
		os.RemoveAll(dir)
		lf.Close()
	}, nil
}

// probeAbandoned reports whether the probe directory dir was left by a
// process that died (its lock can be taken), or, for a directory without a
// lock file, whether it is older than staleProbe.
func probeAbandoned(dir string, old bool) bool {
	f, err := os.Open(filepath.Join(dir, ".lock"))
	if err != nil {
		return errors.Is(err, fs.ErrNotExist) && old
	}
	defer f.Close()
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
