package cargopm

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/sdk/filelock"
)

// newProbeDir makes a probe directory under base that carries a lock held
// for the life of this process's use of it: the lock file is locked before
// it is renamed into the directory, so another process never sees it
// unlocked while its owner lives. release removes the directory.
func newProbeDir(base string) (dir string, release func(), err error) {
	tf, err := os.CreateTemp(base, ".probe-lock-")
	if err != nil {
		return "", nil, err
	}
	name := tf.Name()
	tf.Close()
	lf, err := filelock.Open(name)
	if err == nil {
		var ok bool
		ok, err = lf.TryLock(filelock.Exclusive)
		if err == nil && !ok {
			err = errors.New("probe lock " + name + " is held by another process")
		}
		if errors.Is(err, errors.ErrUnsupported) {
			err = nil // no file locks here: only age tells a dead owner
		}
		if err != nil {
			lf.Close()
		}
	}
	if err == nil {
		dir, err = os.MkdirTemp(base, "probe-")
		if err == nil {
			err = os.Rename(name, filepath.Join(dir, ".lock"))
		}
		if err != nil {
			lf.Close()
		}
	}
	if err != nil {
		os.Remove(name)
		if dir != "" {
			os.RemoveAll(dir)
		}
		return "", nil, err
	}
	return dir, func() {
		os.RemoveAll(dir)
		lf.Close()
		os.RemoveAll(dir) // Windows keeps a directory whose file is open
	}, nil
}

// probeAbandoned reports whether the probe directory dir was left by a
// process that died (its lock can be taken), or, for a directory without a
// lock file or on a system without file locks, whether it is older than
// staleProbe.
func probeAbandoned(dir string, old bool) bool {
	p := filepath.Join(dir, ".lock")
	if _, err := os.Stat(p); err != nil {
		return errors.Is(err, fs.ErrNotExist) && old
	}
	l, err := filelock.Open(p)
	if err != nil {
		return false
	}
	defer l.Close()
	ok, err := l.TryLock(filelock.Exclusive)
	if errors.Is(err, errors.ErrUnsupported) {
		return old
	}
	return ok
}
