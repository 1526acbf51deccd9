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
		return nil, readErr(filepath.Join(dir, filepath.FromSlash(name)), err)
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
		return nil, &Error{Path: full, Cause: fmt.Sprintf("%d bytes, %v of %d bytes", size, ErrTooLarge, limit), Err: ErrTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, readErr(full, err)
	}
	if int64(len(data)) > limit {
		return nil, &Error{Path: full, Cause: fmt.Sprintf("grew past %d bytes while read, %v", limit, ErrTooLarge), Err: ErrTooLarge}
	}
	return data, nil
}

// Open opens name inside dir for reading under the rules of the package
// doc but without a size cap, for callers that read only a bounded prefix
// (the headers of a METADATA file, say).
func Open(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, readErr(filepath.Join(dir, filepath.FromSlash(name)), err)
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
			return nil, full, 0, &Error{Path: full, Cause: fs.ErrNotExist.Error(), Err: fs.ErrNotExist}
		}
		if lfi, lerr := root.Lstat(name); lerr == nil && lfi.Mode()&fs.ModeSymlink != 0 {
			return nil, full, 0, &Error{Path: full, Cause: ErrOutside.Error(), Err: ErrOutside}
		}
		return nil, full, 0, readErr(full, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, full, 0, notRegular(full, fi.Mode())
	}
	// Open without blocking (the name may have been swapped for a FIFO
	// since the stat) and check again what was opened.
	f, err := root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, full, 0, readErr(full, err)
	}
	ofi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, full, 0, readErr(full, err)
	}
	if !ofi.Mode().IsRegular() {
		f.Close()
		return nil, full, 0, notRegular(full, ofi.Mode())
	}
	// Reads of a regular file ignore O_NONBLOCK.
	return f, full, ofi.Size(), nil
}

// Error is a read that failed: the file's full path (the directory
// joined with the name) and why, in words that do not repeat the path.
// It wraps fs.ErrNotExist, ErrNotRegular, ErrTooLarge, ErrOutside or the
// system's error.
type Error struct {
	Path  string
	Cause string
	Err   error
	// system marks a system call's failure: the message is then "reading
	// PATH: " and the system's whole error.
	system bool
}

func (e *Error) Error() string {
	if e.system {
		return "reading " + e.Path + ": " + e.Err.Error()
	}
	return e.Path + ": " + e.Cause
}

func (e *Error) Unwrap() error { return e.Err }

// readErr is the Error of a system call that failed reading full; its
// cause is the system's reason alone.
func readErr(full string, err error) error {
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err
	}
	return &Error{Path: full, Cause: cause.Error(), Err: err, system: true}
}

func notRegular(full string, m fs.FileMode) error {
	return &Error{Path: full, Cause: fmt.Sprintf("%v (%s)", ErrNotRegular, describe(m)), Err: ErrNotRegular}
}

// Cause is why a read of a package file failed, without the file's path,
// for a message that names the file itself: "a link leading out of the
// package", "2097152 bytes, over the size cap of 1048576 bytes", "not a
// regular file (a directory)", "permission denied". An error that is not
// an [Error] is given whole, or its system reason when it is an
// [fs.PathError].
func Cause(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Cause
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
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
