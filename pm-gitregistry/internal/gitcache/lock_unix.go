//go:build unix

package gitcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often a blocked lock attempt is retried.
const lockPoll = 20 * time.Millisecond

// fileLock is an advisory lock on a file shared by every process using the
// same cache directory (flock(2): held per open file, released at exit).
type fileLock struct {
	f *os.File
}

func openLock(path string) (*fileLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open lock file %s: %w", path, err)
	}
	return &fileLock{f: f}, nil
}

// try attempts the lock without waiting and reports whether it was taken.
func (l *fileLock) try(exclusive bool) (bool, error) {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	err := syscall.Flock(int(l.f.Fd()), how|syscall.LOCK_NB)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		return false, nil
	}
	return false, fmt.Errorf("lock %s: %w", l.f.Name(), err)
}

// lock waits for the lock until ctx is done.
func (l *fileLock) lock(ctx context.Context, exclusive bool) error {
	for {
		ok, err := l.try(exclusive)
		if err != nil || ok {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for lock %s: %w", l.f.Name(), ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

func (l *fileLock) unlock() error {
	return syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
}

func (l *fileLock) close() error {
	return l.f.Close()
}
