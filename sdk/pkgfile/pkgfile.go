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
	"strings"
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
	f, full, size, err := open(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > limit {
		return nil, fmt.Errorf("%s: %d bytes, %w of %d bytes", full, size, ErrTooLarge, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", full, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: grew past %d bytes while read, %w", full, limit, ErrTooLarge)
	}
	return data, nil
}

// Open opens name inside dir for reading under the rules of the package
// doc but without a size cap, for callers that read only a bounded prefix
// (the headers of a METADATA file, say).
func Open(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", filepath.Join(dir, filepath.FromSlash(name)), err)
	}
	defer root.Close()
	return OpenRoot(root, name)
}

// OpenRoot is Open inside an open root.
func OpenRoot(root *os.Root, name string) (*os.File, error) {
	f, _, _, err := open(root, name)
	return f, err
}

// open opens name in root after checking it is a regular file inside the
// root, and returns it with its full path (for errors) and its size.
func open(root *os.Root, name string) (*os.File, string, int64, error) {
	full := filepath.Join(root.Name(), filepath.FromSlash(name))
	// Stat first (following links only inside the root), so that a FIFO
	// or a device is never opened.
	fi, err := root.Stat(name)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, full, 0, fmt.Errorf("%s: %w", full, fs.ErrNotExist)
		}
		if lfi, lerr := root.Lstat(name); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			return nil, full, 0, fmt.Errorf("%s: %w", full, ErrOutside)
		}
		return nil, full, 0, fmt.Errorf("reading %s: %w", full, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, full, 0, fmt.Errorf("%s: %w (%s)", full, ErrNotRegular, describe(fi.Mode()))
	}
	// Open without blocking (the name may have been swapped for a FIFO
	// since the stat) and check again what was opened.
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, full, 0, fmt.Errorf("reading %s: %w", full, err)
	}
	ofi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, full, 0, fmt.Errorf("reading %s: %w", full, err)
	}
	if !ofi.Mode().IsRegular() {
		f.Close()
		return nil, full, 0, fmt.Errorf("%s: %w (%s)", full, ErrNotRegular, describe(ofi.Mode()))
	}
	// Reads of a regular file ignore O_NONBLOCK.
	return f, full, ofi.Size(), nil
}

// Cause is why a read of this package failed, in words that do not repeat
// the path, for a message that names the file itself: "a link leading out
// of the package", "2097152 bytes, over the size cap of 1048576 bytes",
// "not a regular file (a directory)", "permission denied". full is the
// file's path as the read named it (the directory joined with the name).
func Cause(full string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	msg := err.Error()
	for _, prefix := range []string{full + ": ", "reading " + full + ": "} {
		if rest, ok := strings.CutPrefix(msg, prefix); ok {
			return rest
		}
	}
	return msg
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
