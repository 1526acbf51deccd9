// Package pkgfiletest makes the hostile files the bounded readers of
// package pkgfile must refuse, for tests of every reader that uses them: a
// FIFO, which a plain read would wait on forever, a link to /dev/zero,
// which a plain read would read without end, and a file one byte over a
// cap, made sparse so that a cap of hundreds of MiB costs no disk space.
package pkgfiletest

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Kind is the kind of hostile file Make makes.
type Kind string

// The kinds of hostile file.
const (
	// FIFO is a named pipe with no writer.
	FIFO Kind = "fifo"
	// Oversize is a regular file one byte over the cap, sparse.
	Oversize Kind = "big"
	// DevZero is a symbolic link to /dev/zero, a character device that
	// reads as zeros without end.
	DevZero Kind = "zero"
)

// Make makes path (and its directory) a hostile file of the given kind;
// limit is the cap an Oversize file is one byte over. It skips tb when the
// file system cannot make a FIFO or a link, or has no /dev/zero.
func Make(tb testing.TB, path string, kind Kind, limit int64) {
	tb.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if kind == FIFO {
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			tb.Skipf("no FIFO here: %v", err)
		}
		return
	}
	if kind == DevZero {
		if _, err := os.Stat("/dev/zero"); err != nil {
			tb.Skipf("no /dev/zero here: %v", err)
		}
		if err := os.Symlink("/dev/zero", path); err != nil {
			tb.Skipf("no symbolic link here: %v", err)
		}
		return
	}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(limit + 1); err != nil {
		tb.Fatal(err)
	}
}

// Within runs f, a read of a file Make made, and fails tb when f has not
// returned after 5 s: the read waits on a FIFO or reads a device without
// end. (f goes on in the background then; the test binary ends with it.)
// The 5 s is a guard against a hang, not a measure of speed.
func Within(tb testing.TB, what string, f func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		tb.Fatalf("%s still blocked after 5 s", what)
	}
}
