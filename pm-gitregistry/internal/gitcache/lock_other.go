//go:build !unix

package gitcache

import (
	"context"
	"fmt"
	"os"
)

// fileLock is a stand-in where flock(2) is unavailable: locking always
// succeeds for shared holders and never for an exclusive garbage collector,
// so unreferenced commits are simply kept.
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

func (l *fileLock) try(exclusive bool) (bool, error) { return !exclusive, nil }

func (l *fileLock) lock(ctx context.Context, exclusive bool) error { return ctx.Err() }

func (l *fileLock) unlock() error { return nil }

func (l *fileLock) close() error { return l.f.Close() }
