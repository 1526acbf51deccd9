package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-billy/v5/helper/chroot"
	"github.com/go-git/go-billy/v5/osfs"
	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// WriteError is a failure to write the cache itself: a full disk, a
// read-only or vanished directory. It is a fault of the machine, not of the
// registry's content or of the remote.
type WriteError struct {
	// Dir is the cache directory.
	Dir string
	// Err is the cause, normally naming the file that could not be written.
	Err error
}

// Error names the cache and the cause.
func (e *WriteError) Error() string {
	return fmt.Sprintf("cannot write the registry cache %s: %v", e.Dir, e.Err)
}

// Unwrap returns the cause.
func (e *WriteError) Unwrap() error { return e.Err }

// fetchStorage is the bare repository's storage. It exists because of how a
// fetch fails when the disk is full: go-git stops reading the pack stream at
// the first write error and then waits for the transport to finish, but the
// server side (git-upload-pack, for a local repository) is blocked writing
// the rest of the pack into a pipe nobody reads, so the fetch never returns
// and the server process never exits. During a fetch, therefore, the first
// write error is recorded instead of returned, the fetch's context is
// cancelled (go-git then stops reading and kills the server process), and
// the recorded error is what the fetch reports.
type fetchStorage struct {
	*filesystem.Storage
	// maxPack bounds the pack a fetch receives (MaxPackSize).
	maxPack int64

	mu     sync.Mutex
	cancel context.CancelFunc // of the fetch in progress, or nil
	err    error              // the first write error of that fetch
}

// begin marks the start of a fetch whose context cancel ends.
func (s *fetchStorage) begin(cancel context.CancelFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel, s.err = cancel, nil
}

// end marks the end of the fetch and returns its first write error.
func (s *fetchStorage) end() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := s.err
	s.cancel, s.err = nil, nil
	return err
}

// fail records err during a fetch (and returns nil), or returns it outside
// one.
func (s *fetchStorage) fail(err error) error {
	if err == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return err
	}
	if s.err == nil {
		s.err = err
	}
	s.cancel()
	return nil
}

// PackfileWriter returns a writer for the fetched pack whose write failures
// are deferred to the end of the fetch.
func (s *fetchStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		if err := s.fail(err); err != nil {
			return nil, err
		}
		return &packWriter{s: s, failed: true}, nil
	}
	return &packWriter{s: s, w: w}, nil
}

// SetShallow records the shallow boundary; go-git writes it before reading
// the pack, so its failure is deferred too.
func (s *fetchStorage) SetShallow(commits []plumbing.Hash) error {
	return s.fail(s.Storage.SetShallow(commits))
}

// packWriter forwards a pack to the storage until a write fails or the
// pack passes the storage's cap, and then swallows the rest.
type packWriter struct {
	s      *fetchStorage
	w      io.WriteCloser // nil when the storage could not open one
	n      int64          // bytes received
	failed bool
}

func (p *packWriter) Write(b []byte) (int, error) {
	if p.failed {
		return len(b), nil
	}
	if p.n += int64(len(b)); p.s.maxPack > 0 && p.n > p.s.maxPack {
		if err := p.s.fail(&PackTooLargeError{Max: p.s.maxPack}); err != nil {
			return 0, err
		}
		p.failed = true
		return len(b), nil
	}
	if _, err := p.w.Write(b); err != nil {
		if err := p.s.fail(err); err != nil {
			return 0, err
		}
		p.failed = true
	}
	return len(b), nil
}

func (p *packWriter) Close() error {
	if p.w == nil {
		return nil
	}
	err := p.w.Close()
	if p.failed {
		return nil // the recorded error is the one to report
	}
	return err
}

// MaxPackSize bounds the pack one fetch receives: a remote that sends more
// (an endless stream, a pack far larger than any registry) is refused
// before the disk fills, and the repository keeps what it had.
const MaxPackSize = 4 << 30

// PackTooLargeError reports a fetch whose pack passed MaxPackSize.
type PackTooLargeError struct {
	// Max is the cap in force, in bytes.
	Max int64
}

// Error names the cap.
func (e *PackTooLargeError) Error() string {
	return fmt.Sprintf("the remote sent a pack of more than %d bytes (the cap on one fetch); refusing it", e.Max)
}

// repoFS returns the file system the bare repository is stored on.
func (c *Cache) repoFS() billy.Filesystem {
	fs := c.ownFS()
	if c.cfg.BeforeWrite != nil {
		fs = &hookFS{Filesystem: fs, base: c.repoDir, hook: c.cfg.BeforeWrite}
	}
	return fs
}

// openStorage opens the bare repository, which must exist.
func (c *Cache) openStorage() (*git.Repository, error) {
	fi, err := os.Stat(c.repoDir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, git.ErrRepositoryNotExists
		}
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", c.repoDir)
	}
	st := &fetchStorage{Storage: filesystem.NewStorage(c.repoFS(), cache.NewObjectLRUDefault()), maxPack: c.packLimit()}
	return git.Open(st, nil)
}

// openReader opens the repository for reading objects with its pack files
// kept open: without that, go-git opens the pack again for every object it
// reads, which made materializing a commit cost an open per tree and blob.
// The returned function closes the pack files.
func (c *Cache) openReader() (*git.Repository, func(), error) {
	st := filesystem.NewStorageWithOptions(c.ownFS(), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	repo, err := git.Open(st, nil)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return repo, func() { st.Close() }, nil
}

// initStorage creates an empty bare repository in a directory that does
// not exist.
func (c *Cache) initStorage() (*git.Repository, error) {
	if err := os.MkdirAll(c.repoDir, 0o755); err != nil {
		return nil, err
	}
	st := &fetchStorage{Storage: filesystem.NewStorage(c.repoFS(), cache.NewObjectLRUDefault()), maxPack: c.packLimit()}
	return git.Init(st, nil)
}

// ownFS is the file system of the repository (c.repoDir): osfs's, except that
// go-git's reads of the repository's files (HEAD, config, refs, packs and
// their indexes) open them as cache-owned files: without blocking, and
// refused unless what was opened is a regular file (pkgfile.OwnOpenFlag,
// pkgfile.CheckOwnOpened). A FIFO put in place of one of them hung every
// update; the repository is now unreadable instead, and repaired as a
// damaged one is, by fetching into a fresh one. Packs have no size cap
// (they hold the registry's history); a device is still refused.
// A refusal is a warning naming the file (refusalLog): go-git itself
// reports some (config) and not others (HEAD, which the next fetch writes
// again).
func (c *Cache) ownFS() billy.Filesystem {
	return &refusalLog{Filesystem: chroot.New(regularOS{osfs.Default}, c.repoDir), c: c}
}

// refusalLog warns, once per file for the life of the Cache, of a
// repository file refused for reading for anything but its absence: not a
// regular file, a link out of the repository, a failed system call. Most
// such refusals go on silently inside go-git otherwise.
type refusalLog struct {
	billy.Filesystem
	c *Cache
}

// Open opens name for reading (OpenFile).
func (r *refusalLog) Open(name string) (billy.File, error) {
	return r.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens name, and warns of a read-only open refused.
func (r *refusalLog) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	f, err := r.Filesystem.OpenFile(name, flag, perm)
	if err != nil && flag&writeFlags == 0 {
		r.warn(name, err)
	}
	return f, err
}

// Stat stats name, following links, and warns of a refusal: go-git stats
// a reference file before opening it, and chroot refuses a link out of the
// repository there.
func (r *refusalLog) Stat(name string) (iofs.FileInfo, error) {
	fi, err := r.Filesystem.Stat(name)
	if err != nil {
		r.warn(name, err)
	}
	return fi, err
}

// warn warns of err, a refusal to read name, unless the file is absent or
// was warned of before.
func (r *refusalLog) warn(name string, err error) {
	if errors.Is(err, iofs.ErrNotExist) {
		return
	}
	path := filepath.Join(r.c.repoDir, filepath.FromSlash(name))
	r.c.rmu.Lock()
	seen := r.c.refused[path]
	r.c.refused[path] = true
	r.c.rmu.Unlock()
	if !seen {
		r.c.log.Warn("cached repository file refused; the repository is read without it", "file", path, "err", err)
	}
}

// writeFlags are the open flags of an open that may write.
const writeFlags = os.O_WRONLY | os.O_RDWR | os.O_CREATE | os.O_APPEND | os.O_TRUNC

// osLayer is what osfs.Default, the operating system's file system
// taking full paths, does: billy's file system operations but Chroot, and
// the optional ones go-git and chroot look for (Chmod, RemoveAll,
// Capabilities). Naming it keeps every method of osfs.Default promoted
// through regularOS without naming osfs's deprecated ChrootOS type.
type osLayer interface {
	billy.Basic
	billy.TempFile
	billy.Dir
	billy.Symlink
	Chmod(name string, mode os.FileMode) error
	RemoveAll(path string) error
	Capabilities() billy.Capability
}

// regularOS is osfs.Default (which takes full paths; chroot above it
// roots them in the repository) opening files for reading as ownFS says.
// It sits below chroot because chroot's files do not expose Stat.
type regularOS struct{ osLayer }

// Open opens name for reading (OpenFile).
func (r regularOS) Open(name string) (billy.File, error) {
	return r.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens name; a read-only open is made without blocking and what
// it opened must be a regular file. A refusal is a pkgfile error naming
// the file; a missing file's error is osfs's own, which go-git tests with
// os.IsNotExist.
func (r regularOS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&writeFlags != 0 {
		return r.osLayer.OpenFile(name, flag, perm)
	}
	f, err := r.osLayer.OpenFile(name, flag|pkgfile.OwnOpenFlag, perm)
	if err != nil {
		return nil, err
	}
	st, ok := f.(interface{ Stat() (iofs.FileInfo, error) })
	if !ok {
		f.Close()
		return nil, fmt.Errorf("open %s: the file system does not say what it opened", name)
	}
	if _, err := pkgfile.CheckOwnOpened(st, name, math.MaxInt64); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// hookFS calls a hook before every write to a file, so tests can make
// writes fail as on a full disk.
type hookFS struct {
	billy.Filesystem
	base string
	hook func(path string, n int) error
}

func (h *hookFS) wrap(f billy.File, err error) (billy.File, error) {
	if err != nil {
		return nil, err
	}
	return &hookFile{File: f, path: h.Filesystem.Join(h.base, f.Name()), hook: h.hook}, nil
}

func (h *hookFS) Create(name string) (billy.File, error) {
	return h.wrap(h.Filesystem.Create(name))
}

func (h *hookFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	return h.wrap(h.Filesystem.OpenFile(name, flag, perm))
}

func (h *hookFS) TempFile(dir, prefix string) (billy.File, error) {
	return h.wrap(h.Filesystem.TempFile(dir, prefix))
}

func (h *hookFS) Chroot(p string) (billy.Filesystem, error) {
	fs, err := h.Filesystem.Chroot(p)
	if err != nil {
		return nil, err
	}
	return &hookFS{Filesystem: fs, base: h.Filesystem.Join(h.base, p), hook: h.hook}, nil
}

type hookFile struct {
	billy.File
	path string
	hook func(path string, n int) error
}

func (f *hookFile) Write(b []byte) (int, error) {
	if err := f.hook(f.path, len(b)); err != nil {
		return 0, err
	}
	return f.File.Write(b)
}

// hookWriter calls a hook before every write to w, and remembers the first
// write error.
type hookWriter struct {
	w    io.Writer
	path string
	hook func(path string, n int) error
	err  error
}

func (h *hookWriter) Write(b []byte) (int, error) {
	if h.hook != nil {
		if err := h.hook(h.path, len(b)); err != nil {
			h.err = err
			return 0, err
		}
	}
	n, err := h.w.Write(b)
	if err != nil && h.err == nil {
		h.err = err
	}
	return n, err
}

// CheckLocal reports, without touching the network, a registry that can
// already be seen to be unreadable: a local path or file:// URL that does
// not exist or is not a git repository. Remote URLs are not checked.
func (c *Cache) CheckLocal() error {
	if c.remote.endpoint == nil || c.remote.endpoint.Protocol != "file" {
		return nil
	}
	p := c.remote.endpoint.Path
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return &RemoteError{URL: c.remote.url, Err: errors.New("no such file or directory")}
	case err != nil:
		return &RemoteError{URL: c.remote.url, Err: err}
	case !fi.IsDir():
		return &RemoteError{URL: c.remote.url, Err: errors.New("not a directory")}
	}
	for _, head := range []string{"HEAD", ".git"} {
		if _, err := os.Stat(filepath.Join(p, head)); err == nil {
			return nil
		}
	}
	return &RemoteError{URL: c.remote.url, Err: errors.New("not a git repository")}
}
