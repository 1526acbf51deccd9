// Package atomicfile replaces files and directories so that a reader sees
// the old content or the new, never a part: a file is written beside its
// destination, flushed to disk and renamed over it; a directory tree is
// built beside its destination and renamed into place (PublishDir) or
// exchanged with the tree already there (SwapDir).
//
// A crash leaves at most a temporary file beside the destination, named
// ".tmp-<base name>-<random>", for the caller's own sweep of stale
// temporaries (directories are the caller's to name and sweep).
//
// google/renameio does the file half of this job on Unix only (its package
// is empty on Windows) and has no directory swap, so this package is
// written here; on Windows the rename is MoveFileEx with replacement, which
// os.Rename already uses.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written in place of another. Write to it, then
// Commit; Abort (deferred) removes it unless committed.
type File struct {
	*os.File
	path string
	done bool
}

// Create starts replacing the file at path: a temporary file in the same
// directory, with permissions perm.
func Create(path string, perm fs.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("writing %s: %w", path, err)
	}
	return &File{File: f, path: path}, nil
}

// Commit flushes the file to disk, closes it and renames it over the
// destination, then flushes the directory (where the system allows) so
// that the rename survives a crash. On failure the temporary file is
// removed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("writing %s: already committed or aborted", f.path)
	}
	f.done = true
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	syncDir(filepath.Dir(f.path))
	return nil
}

// Abort closes and removes the temporary file, unless Commit ran; it is
// meant to be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.Close()
	os.Remove(f.Name())
}

// WriteFile replaces the file at path with data, atomically, with
// permissions perm. The directory must exist.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// PublishDir renames the finished directory tmp to dest, which must be
// beside it. When dest already exists (another process published the same
// content first), dest is kept and tmp removed: directories handed out stay
// valid. It reports whether tmp became dest.
func PublishDir(tmp, dest string) (bool, error) {
	err := os.Rename(tmp, dest)
	if err == nil {
		syncDir(filepath.Dir(dest))
		return true, nil
	}
	if fi, serr := os.Stat(dest); serr == nil && fi.IsDir() {
		os.RemoveAll(tmp)
		return false, nil
	}
	return false, fmt.Errorf("moving %s into place: %w", dest, err)
}

// SwapDir puts the finished directory tmp at dest, which must be beside it.
// When dest exists, the two are exchanged atomically where the system can
// (Linux's renameat2 RENAME_EXCHANGE), so dest always names a complete tree;
// elsewhere the old tree is first moved aside, leaving a moment without
// dest. Either way the old tree ends up at tmp, for the caller to remove
// (or keep, while something may still use it).
func SwapDir(tmp, dest string) error {
	err := os.Rename(tmp, dest)
	if err == nil {
		syncDir(filepath.Dir(dest))
		return nil
	}
	if _, serr := os.Stat(dest); serr != nil {
		return fmt.Errorf("moving %s into place: %w", dest, err)
	}
	if err := exchange(tmp, dest); err == nil {
		syncDir(filepath.Dir(dest))
		return nil
	} else if !errors.Is(err, errors.ErrUnsupported) {
		return fmt.Errorf("exchanging %s: %w", dest, err)
	}
	aside := tmp + ".old"
	if err := os.Rename(dest, aside); err != nil {
		return fmt.Errorf("moving %s aside: %w", dest, err)
	}
	if err := os.Rename(tmp, dest); err != nil {
		_ = os.Rename(aside, dest)
		return fmt.Errorf("moving %s into place: %w", dest, err)
	}
	if err := os.Rename(aside, tmp); err != nil {
		return fmt.Errorf("moving the old %s to %s: %w", dest, tmp, err)
	}
	syncDir(filepath.Dir(dest))
	return nil
}
