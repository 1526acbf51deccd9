// Package filelock is an advisory lock on a file, shared by every process
// that opens the same path: flock(2) on Unix, LockFileEx on Windows. A lock
// belongs to the open file, so it is released when the file is closed or
// the process ends, however it ends; that is what lets a later process tell
// a directory abandoned by a killed owner (its lock can be taken) from one
// in use.
//
// Elsewhere (Plan 9, js, wasip1) locking fails with an error wrapping
// errors.ErrUnsupported, so that a caller decides what to do without locks
// rather than believing it holds one.
//
// Changing the mode of a held lock (Shared to Exclusive or back) is not
// atomic on either system: another process may take the lock in between.
//
// The standard library keeps its file lock internal (cmd/go/internal/
// lockedfile), and the few published copies add nothing this package
// needs, so it is written here on golang.org/x/sys.
package filelock

import (
	"context"
	"fmt"
	"os"
	"time"
)

// Mode is how a lock is held.
type Mode int

const (
	// Shared may be held by many processes at once, never together with
	// Exclusive.
	Shared Mode = iota
	// Exclusive is held by one process at a time.
	Exclusive
)

// String names the mode.
func (m Mode) String() string {
	if m == Exclusive {
		return "exclusive"
	}
	return "shared"
}

// Poll is how often Lock retries a lock another process holds.
const Poll = 20 * time.Millisecond

// File is an open lock file. It is not safe for concurrent use.
type File struct {
	f    *os.File
	held bool
}

// Open opens the lock file at path, creating it (mode 0o644) if missing. It
// takes no lock.
func Open(path string) (*File, error) {
	f, err := openFile(path)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	return &File{f: f}, nil
}

// Name returns the lock file's path.
func (l *File) Name() string { return l.f.Name() }

// TryLock takes the lock in mode m without waiting and reports whether it
// did. A lock already held by l changes mode.
func (l *File) TryLock(m Mode) (bool, error) {
	if l.held {
		if err := l.Unlock(); err != nil {
			return false, err
		}
	}
	ok, err := tryLock(l.f, m)
	if err != nil {
		return false, fmt.Errorf("lock %s (%s): %w", l.f.Name(), m, err)
	}
	l.held = ok
	return ok, nil
}

// Lock takes the lock in mode m, waiting (polling every Poll) while another
// process holds it, until ctx is done.
func (l *File) Lock(ctx context.Context, m Mode) error {
	t := time.NewTicker(Poll)
	defer t.Stop()
	for {
		ok, err := l.TryLock(m)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for lock %s: %w", l.f.Name(), context.Cause(ctx))
		case <-t.C:
		}
	}
}

// Unlock releases the lock, if held.
func (l *File) Unlock() error {
	if !l.held {
		return nil
	}
	l.held = false
	if err := unlock(l.f); err != nil {
		return fmt.Errorf("unlock %s: %w", l.f.Name(), err)
	}
	return nil
}

// Close releases the lock and closes the file.
func (l *File) Close() error {
	uerr := l.Unlock()
	if err := l.f.Close(); err != nil {
		return err
	}
	return uerr
}
