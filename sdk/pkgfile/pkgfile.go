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
//
// A file the user owns rather than a package (a workspace's manifest,
// lockfile or configuration) is read with ReadUserFile: links are followed
// wherever they lead, and the same bounds hold for what they lead to.
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
// It is also the cap for a workspace's manifest or configuration file
// (Cargo.toml, package.json, pyproject.toml, .npmrc, pip.conf), which are
// a few KiB even in large projects.
const MaxManifest = 1 << 20

// MaxLockfile is the size cap for a workspace's lockfile (256 MiB).
// Lockfiles grow with the dependency graph: at 50,000 packages the
// cold-lock benchmarks' inputs are a 24 MB package-lock.json, a 13 MB
// Cargo.lock, a 34 MB uv.lock and a 25 MB poetry.lock, so the cap stands
// more than seven times above the largest while still keeping a runaway
// file from being read whole (a device or a FIFO is refused whatever its
// cap).
const MaxLockfile = 256 << 20

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
	return readBounded(f, full, size, limit)
}

// ReadUserFile reads the file at path, one the user owns (a workspace's
// manifest, lockfile or configuration file) rather than one inside a
// package. Links are followed wherever they lead (a user's file is often a
// link into a dotfiles repository or a shared checkout), but what they
// lead to must be a regular file (not a FIFO, which would wait for a
// writer, nor a device) of at most limit bytes. Errors are [Error]s
// naming path and the cause; an absent file's wraps fs.ErrNotExist. The
// one device read is os.DevNull, as the empty file it is to the tools whose
// files a user points at it to turn them off (GIT_CONFIG_GLOBAL=/dev/null,
// npm_config_userconfig=/dev/null).
func ReadUserFile(path string, limit int64) ([]byte, error) {
	if path == os.DevNull {
		return []byte{}, nil
	}
	f, size, err := openUser(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := readBounded(f, path, size, limit)
	if err != nil {
		return nil, viaLink(path, err)
	}
	return data, nil
}

// OpenUserFile opens the file at path as ReadUserFile reads it, for a
// caller that reads it a part at a time: it must be a regular file of at
// most limit bytes when opened. It returns the file and its size then; a
// caller reads no further than that size (io.NewSectionReader), so that a
// file growing while read is not read past it.
func OpenUserFile(path string, limit int64) (*os.File, int64, error) {
	f, size, err := openUser(path)
	if err != nil {
		return nil, 0, err
	}
	if size > limit {
		f.Close()
		return nil, 0, viaLink(path, tooLarge(path, size, limit))
	}
	return f, size, nil
}

// ReadOwnFile reads the file at path, one the caller wrote itself (a
// cache entry), at most limit bytes, for a hot path: it costs the system
// calls of os.ReadFile. Unlike ReadUserFile it does not stat the file
// before opening it: it opens it without blocking and checks what it
// opened, so a FIFO or a device put in its place is opened (an open that
// does not wait) but refused before it is read. Errors are as
// ReadUserFile's.
func ReadOwnFile(path string, limit int64) ([]byte, error) {
	f, size, err := OpenOwnFile(path, limit)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f, path, size, limit)
}

// OpenOwnFile opens the file at path as ReadOwnFile reads it, for a
// caller that reads it a part at a time (the head of a cache entry, then
// a section of it): it costs the system calls of os.Open and one fstat.
// The file is opened without blocking and what was opened must be a
// regular file of at most limit bytes, or it is closed and refused. It
// returns the file and its size then; a caller reads no further than that
// size. Errors are as ReadOwnFile's.
func OpenOwnFile(path string, limit int64) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|OwnOpenFlag, 0)
	if err != nil {
		return nil, 0, readErr(path, err)
	}
	size, err := CheckOwnOpened(f, path, limit)
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, size, nil
}

// OwnOpenFlag is the flag a read-only open of a cache-owned file adds
// when another library opens it (go-git, through a billy file system):
// O_NONBLOCK where a FIFO can be opened by name, so that the open of a
// FIFO put in the file's place does not wait for a writer; 0 elsewhere.
// CheckOwnOpened then checks what was opened.
const OwnOpenFlag = openNonblock

// CheckOwnOpened checks f, a cache-owned file opened read-only with
// OwnOpenFlag as path (by OpenOwnFile, or by another library that hands
// back what it opened): it must be a regular file of at most limit bytes.
// It returns the file's size then, or OpenOwnFile's errors; the caller
// closes f either way.
func CheckOwnOpened(f interface{ Stat() (fs.FileInfo, error) }, path string, limit int64) (int64, error) {
	size, err := checkOpened(f, path)
	if err == nil && size > limit {
		err = tooLarge(path, size, limit)
	}
	return size, err
}

// openUser opens the file at path, following links, after checking it is
// a regular file, and returns it with its size.
func openUser(path string) (*os.File, int64, error) {
	// Stat first (following links), so that a FIFO or a device is never
	// opened.
	fi, err := os.Stat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, &Error{Path: path, Cause: fs.ErrNotExist.Error(), Err: fs.ErrNotExist}
		}
		return nil, 0, readErr(path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, viaLink(path, notRegular(path, fi.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, 0, readErr(path, err)
	}
	size, err := checkOpened(f, path)
	if err != nil {
		f.Close()
		return nil, 0, viaLink(path, err)
	}
	return f, size, nil
}

// viaLink adds to err, an [Error] reading path, what path is a link to
// when it is one, so that a refusal names the file that was refused
// ("a link to /dev/zero: not a regular file (a character device)").
func viaLink(path string, err error) error {
	var e *Error
	if !errors.As(err, &e) || e.system {
		return err
	}
	if fi, lerr := os.Lstat(path); lerr != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return err
	}
	target, rerr := filepath.EvalSymlinks(path)
	if rerr != nil {
		return err
	}
	return &Error{Path: e.Path, Cause: "a link to " + target + ": " + e.Cause, Err: e.Err}
}

// readBounded reads the open regular file f (full names it, size is its
// size when opened) up to limit bytes, into one buffer of the size it had
// when opened and room to find its end: io.ReadAll would grow a buffer
// from 512 bytes, copying as it goes, and allocated 31 MB to read a 13 MB
// lockfile, a third of a cold hook's peak memory. A file that grew since
// it was opened is read on, up to limit, into a larger buffer.
func readBounded(f *os.File, full string, size, limit int64) ([]byte, error) {
	if size > limit {
		return nil, tooLarge(full, size, limit)
	}
	data := make([]byte, 0, size+512)
	r := io.LimitReader(f, limit+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // it grew: a larger buffer
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, readErr(full, err)
		}
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
		if leadsOut(root, name) {
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
	size, err := checkOpened(f, full)
	if err != nil {
		f.Close()
		return nil, full, 0, err
	}
	return f, full, size, nil
}

// leadsOut reports whether name, which root could not stat, goes through a
// link leading out of the root: the name itself or any directory on its
// way. Only a failed read asks, so its lstats cost nothing on the usual
// path.
func leadsOut(root *os.Root, name string) bool {
	prefix := ""
	for part := range strings.SplitSeq(filepath.ToSlash(name), "/") {
		if prefix == "" {
			prefix = part
		} else {
			prefix += "/" + part
		}
		fi, err := root.Lstat(prefix)
		if err != nil {
			return false
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			continue
		}
		if _, err := root.Stat(prefix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	return false
}

// checkOpened checks that the file f, opened without blocking as full, is
// a regular file (the name may have been swapped for a FIFO since it was
// checked) and returns its size.
func checkOpened(f interface{ Stat() (fs.FileInfo, error) }, full string) (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, readErr(full, err)
	}
	if !fi.Mode().IsRegular() {
		return 0, notRegular(full, fi.Mode())
	}
	// Reads of a regular file ignore O_NONBLOCK.
	return fi.Size(), nil
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

func tooLarge(full string, size, limit int64) error {
	return &Error{Path: full, Cause: fmt.Sprintf("%d bytes, %v of %d bytes", size, ErrTooLarge, limit), Err: ErrTooLarge}
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
