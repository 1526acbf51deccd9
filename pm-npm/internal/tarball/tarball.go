// Package tarball extracts npm package tarballs (gzip'd tar, entries under a
// single top directory, normally "package/") safely: every write goes through
// an os.Root, and entries with absolute paths, ".." components, links,
// devices or sizes over the caps are refused, as are archives in which two
// entries land on one path (duplicates, a file where another entry needs a
// directory, or names differing only in case, which collide on macOS and
// Windows).
package tarball

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
)

// Limits caps what one tarball may contain.
type Limits struct {
	// MaxBytes caps the total size of all files.
	MaxBytes int64
	// MaxFileBytes caps one file.
	MaxFileBytes int64
	// MaxEntries caps the number of entries.
	MaxEntries int
}

// maxTrailing caps the decompressed data allowed after the tar archive's end
// (tar tools pad to a 10 KiB record at most).
const maxTrailing = 1 << 20

// Filesystem name limits (Linux's NAME_MAX and PATH_MAX): longer entry
// names are content errors, not write failures.
const (
	maxNameBytes = 255
	maxPathBytes = 4095
)

// DefaultLimits are generous for real npm packages (the registry's own cap
// on unpacked size is far below) and stop decompression bombs.
var DefaultLimits = Limits{MaxBytes: 1 << 30, MaxFileBytes: 512 << 20, MaxEntries: 100_000}

// ContentError reports an archive that is corrupt, unsafe or oversize.
type ContentError struct {
	// Detail says what is wrong, naming the entry when there is one.
	Detail string
	Err    error
}

// Error returns the detail.
func (e *ContentError) Error() string { return e.Detail }

// Unwrap returns the underlying error, if any.
func (e *ContentError) Unwrap() error { return e.Err }

func bad(format string, args ...any) error {
	return &ContentError{Detail: fmt.Sprintf(format, args...)}
}

// Extract reads the gzip'd tarball from r and writes its entries, minus the
// first path component, into the existing directory dir. It returns a
// *ContentError for corrupt, unsafe or oversize content; the caller owns dir
// and removes it on error.
func Extract(r io.Reader, dir string, lim Limits) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	zr, err := gzip.NewReader(r)
	if err != nil {
		return &ContentError{Detail: "not a gzip stream: " + err.Error(), Err: err}
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var total int64
	entries := 0
	paths := newPathSet()
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return &ContentError{Detail: "corrupt tar archive: " + err.Error(), Err: err}
		}
		entries++
		if entries > lim.MaxEntries {
			return bad("more than %d entries", lim.MaxEntries)
		}
		switch h.Typeflag {
		case tar.TypeXGlobalHeader, tar.TypeXHeader, tar.TypeGNULongName, tar.TypeGNULongLink:
			continue
		}
		rel, err := entryPath(h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if rel == "" {
				continue
			}
			if err := paths.add(h.Name, rel, true); err != nil {
				return err
			}
			if err := root.MkdirAll(rel, 0o755); err != nil {
				return fmt.Errorf("creating %s: %w", rel, err)
			}
		case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse:
			// Sizes count even for files that are dropped, so that a
			// dropped entry cannot carry a decompression bomb either.
			if h.Size < 0 || h.Size > lim.MaxFileBytes {
				return bad("entry %q is %d bytes, over the %d-byte cap", h.Name, h.Size, lim.MaxFileBytes)
			}
			total += h.Size
			if total > lim.MaxBytes {
				return bad("unpacked size over the %d-byte cap", lim.MaxBytes)
			}
			if rel == "" {
				continue // a file at the top level: npm drops it too
			}
			if err := paths.add(h.Name, rel, false); err != nil {
				return err
			}
			if err := writeFile(root, rel, h, tr); err != nil {
				return err
			}
		case tar.TypeSymlink, tar.TypeLink:
			return bad("entry %q is a link (to %q); links are not allowed in packages", h.Name, h.Linkname)
		default:
			return bad("entry %q has type %q (device, fifo or other special file); not allowed", h.Name, string(h.Typeflag))
		}
	}
	// Drain the trailing padding so a truncated gzip stream is noticed, but
	// no more than a tar tool pads with.
	n, err := io.Copy(io.Discard, io.LimitReader(zr, maxTrailing+1))
	if err != nil {
		return &ContentError{Detail: "corrupt gzip stream: " + err.Error(), Err: err}
	}
	if n > maxTrailing {
		return bad("more than %d bytes of data after the end of the tar archive", maxTrailing)
	}
	return nil
}

// pathSet records the paths an archive has written (and the directories
// they imply) so that entries colliding on one path are refused.
type pathSet struct {
	isDir map[string]bool   // path → whether it is a directory
	fold  map[string]string // lower-cased path → the path as first spelled
}

func newPathSet() *pathSet {
	return &pathSet{isDir: map[string]bool{}, fold: map[string]string{}}
}

// add claims rel (cleaned, slash-separated) for the entry called name, as a
// directory or a file, with every parent as a directory. A directory may be
// listed twice; anything else on an already claimed path is refused.
func (s *pathSet) add(name, rel string, dir bool) error {
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' {
			if err := s.claim(name, rel[:i], true); err != nil {
				return err
			}
		}
	}
	return s.claim(name, rel, dir)
}

func (s *pathSet) claim(name, p string, dir bool) error {
	if wasDir, ok := s.isDir[p]; ok {
		switch {
		case wasDir && dir:
			return nil
		case wasDir:
			return bad("entry %q is a file where the archive already has the directory %q", name, p)
		case dir:
			return bad("entry %q needs %q to be a directory, but the archive already has a file there", name, p)
		default:
			return bad("entry %q appears more than once in the archive", name)
		}
	}
	low := strings.ToLower(p)
	if other, ok := s.fold[low]; ok {
		return bad("entry %q collides with %q: names differing only in case cannot both be unpacked on every system", name, other)
	}
	s.isDir[p] = dir
	s.fold[low] = p
	return nil
}

// entryPath checks an entry name and returns it without its first
// component ("" for the top directory itself).
func entryPath(name string) (string, error) {
	n := strings.ReplaceAll(name, "\\", "/")
	if strings.HasPrefix(n, "/") || (len(n) > 1 && n[1] == ':') {
		return "", bad("entry %q has an absolute path", name)
	}
	for _, c := range strings.Split(n, "/") {
		if c == ".." {
			return "", bad("entry %q escapes the package directory (\"..\")", name)
		}
		if strings.ContainsRune(c, 0) {
			return "", bad("entry %q has a NUL byte", name)
		}
		if len(c) > maxNameBytes {
			return "", bad("entry %q has a name component over %d bytes", name, maxNameBytes)
		}
	}
	if len(n) > maxPathBytes {
		return "", bad("entry %q has a path over %d bytes", name, maxPathBytes)
	}
	clean := path.Clean(n)
	if clean == "." {
		return "", nil
	}
	_, rest, ok := strings.Cut(clean, "/")
	if !ok {
		return "", nil
	}
	return rest, nil
}

func writeFile(root *os.Root, rel string, h *tar.Header, r io.Reader) error {
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", d, err)
		}
	}
	mode := fs.FileMode(0o644)
	if h.Mode&0o111 != 0 {
		mode = 0o755
	}
	f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return fmt.Errorf("creating %s: %w", rel, err)
	}
	n, err := io.Copy(f, readerTag{io.LimitReader(r, h.Size), h.Name})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		var ce *ContentError
		if errors.As(err, &ce) {
			return err
		}
		return fmt.Errorf("writing %s: %w", rel, err)
	}
	if n != h.Size {
		return bad("entry %q is truncated", h.Name)
	}
	return nil
}

// readerTag turns read errors (a corrupt or truncated archive) into
// *ContentError, so they are told apart from write errors.
type readerTag struct {
	r    io.Reader
	name string
}

// Read reads from the archive stream, tagging failures.
func (t readerTag) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if err != nil && err != io.EOF {
		err = &ContentError{Detail: fmt.Sprintf("entry %q: corrupt archive: %v", t.name, err), Err: err}
	}
	return n, err
}
