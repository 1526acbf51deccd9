// Package pkgfile reads files from inside a package directory that may be
// hostile, with bounds: a file is read only when it is a regular file (not
// a FIFO, a device, a socket or a directory), it is opened through an
// [os.Root] so that no link leads out of the package, and it is read up to
// a size cap. A FIFO is never opened for a blocking read, a device never
// read, and an oversize file is refused before it is read.
//
// MaxManifest, 1 MiB, is the cap for every manifest a PM reads from a
// package: SYMPOSIUM.toml, package.json, METADATA, entry_points.txt,
// SKILL.md. Real ones are a few KiB; a bigger one is refused for that
// package alone, with an error naming the file.
package pkgfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxManifest is the size cap for a manifest read from a package (1 MiB).
const MaxManifest = 1 << 20

// Errors a read may wrap, besides fs.ErrNotExist for an absent file (or a
// link inside the package whose target is absent).
var (
	// ErrNotRegular: the name is a FIFO, device, socket or directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrTooLarge: the file is over the cap.
	ErrTooLarge = errors.New("over the size cap")
	// ErrOutside: the name is a link leading out of the directory.
	ErrOutside = errors.New("a link leading out of the package")
)

// ReadFile reads name (slash-separated, relative) inside the directory
// dir with the bounds of the package doc: at most limit bytes. Errors name
// the file's full path and the cause; an absent file wraps fs.ErrNotExist.
func ReadFile(dir, name string, limit int64) ([]byte, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, filepath.FromSlash(name)), err)
	}
	defer root.Close()
	return ReadRoot(root, name, limit)
}

// ReadRoot is ReadFile inside an open root.
func ReadRoot(root *os.Root, name string, limit int64) ([]byte, error) {
	full := filepath.Join(root.Name(), filepath.FromSlash(name))
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%s: "+format, append([]any{full}, args...)...)
	}
	// Stat first (following links only inside the root), so that a FIFO
	// or a device is never opened.
	fi, err := root.Stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: %w", full, fs.ErrNotExist)
		}
		if lfi, lerr := root.Lstat(name); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			return nil, fail("%w", ErrOutside)
		}
		return nil, fmt.Errorf("reading %s: %w", full, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fail("%w (%s)", ErrNotRegular, describe(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fail("%d bytes, %w of %d bytes", fi.Size(), ErrTooLarge, limit)
	}
	// Open without blocking (the name may have been swapped for a FIFO
	// since the stat) and check again what was opened.
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", full, err)
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", full, err)
	}
	if !ofi.Mode().IsRegular() {
		return nil, fail("%w (%s)", ErrNotRegular, describe(ofi.Mode()))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", full, err)
	}
	if int64(len(data)) > limit {
		return nil, fail("grew past %d bytes while read, %w", limit, ErrTooLarge)
	}
	return data, nil
}

func describe(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "type " + m.Type().String()
}
