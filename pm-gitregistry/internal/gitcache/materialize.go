package gitcache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
)

// Limits on what one commit may materialize.
const (
	// MaxFileSize is the largest file written.
	MaxFileSize = 64 << 20
	// MaxTotalSize bounds the bytes of all files of a commit.
	MaxTotalSize = 1 << 30
	// MaxFiles bounds the files, directories and links of a commit.
	MaxFiles = 200_000
	// maxLinkTarget bounds a symbolic link's target.
	maxLinkTarget = 4096
)

// checkName rejects a tree entry name that could not be a plain path
// component.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("empty path component")
	case name == "." || name == "..":
		return fmt.Errorf("path component %q", name)
	case strings.ContainsAny(name, "/\\\x00"):
		return fmt.Errorf("path component %q contains a separator or NUL", name)
	}
	return nil
}

// materialize writes the commit's tree (or its subdir) into its own
// directory, through a temporary directory renamed into place. The caller
// holds the update lock.
func (c *Cache) materialize(repo *git.Repository, commit plumbing.Hash) (Snapshot, error) {
	id := commit.String()
	if dir, ok := c.commitDir(id); ok {
		return Snapshot{Commit: id, Dir: dir}, nil
	}
	cm, err := repo.CommitObject(commit)
	if err != nil {
		return Snapshot{}, fmt.Errorf("commit %s: %w", id, err)
	}
	tree, err := cm.Tree()
	if err != nil {
		return Snapshot{}, fmt.Errorf("commit %s: tree: %w", id, err)
	}
	if c.cfg.Subdir != "" {
		tree, err = tree.Tree(c.cfg.Subdir)
		if err != nil {
			return Snapshot{}, &ContentError{Commit: id, Detail: fmt.Sprintf("subdir %q is not a directory in the repository", c.cfg.Subdir)}
		}
	}
	if err := os.MkdirAll(c.commitsDir, 0o755); err != nil {
		return Snapshot{}, &WriteError{Dir: c.dir, Err: fmt.Errorf("create %s: %w", c.commitsDir, err)}
	}
	tmp, err := os.MkdirTemp(c.commitsDir, ".tmp-"+id[:12]+"-")
	if err != nil {
		return Snapshot{}, &WriteError{Dir: c.dir, Err: fmt.Errorf("create a directory in %s: %w", c.commitsDir, err)}
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return Snapshot{}, &WriteError{Dir: c.dir, Err: err}
	}
	w := &treeWriter{repo: repo, root: root, dir: tmp, commit: id, c: c}
	prev := w.previous(tree)
	err = w.tree(tree, prev, ".")
	if err == nil {
		w.links()
	}
	root.Close()
	if err != nil {
		return Snapshot{}, err
	}
	// Hand the directory out with the permissions of an ordinary checkout.
	os.Chmod(tmp, 0o755)
	dir := filepath.Join(c.commitsDir, id)
	won, err := atomicfile.PublishDir(tmp, dir)
	if err != nil {
		return Snapshot{}, &WriteError{Dir: c.dir, Err: fmt.Errorf("install commit %s: %w", id, err)}
	}
	if !won {
		return Snapshot{Commit: id, Dir: dir}, nil
	}
	c.log.Debug("materialized commit", "commit", id, "dir", dir, "files", w.files, "bytes", w.bytes, "linked", w.linked, "written", w.written)
	return Snapshot{Commit: id, Dir: dir}, nil
}

// treeWriter writes a git tree below an os.Root.
type treeWriter struct {
	c      *Cache
	repo   *git.Repository
	root   *os.Root
	dir    string // the directory root is open on
	commit string
	files  int
	bytes  int64
	// prevDir is the directory of the commit served before this one, whose
	// unchanged files are hard-linked instead of written; empty for none.
	prevDir string
	linked  int   // files linked from prevDir
	written int64 // bytes written (not linked)
	// symlinks are created after every file so they can be checked.
	symlinks []symlink
}

type symlink struct{ path, target string }

func (w *treeWriter) count() error {
	w.files++
	if w.files > MaxFiles {
		return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("more than %d files", MaxFiles)}
	}
	return nil
}

// previous finds the commit the cache serves now (the one this commit
// replaces), when it is materialized and its tree is in the repository, and
// returns its tree (or subdir) so that unchanged files can be linked from its
// directory: an update then writes in proportion to what changed. Commit
// directories are never written after they are renamed into place, so a file
// shared by two of them never changes under either.
func (w *treeWriter) previous(tree *object.Tree) *object.Tree {
	st, err := w.c.readState()
	if err != nil || st.Commit == w.commit {
		return nil
	}
	dir, ok := w.c.commitDir(st.Commit)
	if !ok {
		return nil
	}
	cm, err := w.repo.CommitObject(plumbing.NewHash(st.Commit))
	if err != nil {
		return nil
	}
	prev, err := cm.Tree()
	if err != nil {
		return nil
	}
	if w.c.cfg.Subdir != "" {
		if prev, err = prev.Tree(w.c.cfg.Subdir); err != nil {
			return nil
		}
	}
	w.prevDir = dir
	return prev
}

// linkPrevious hard-links p from the previous commit's directory when that
// commit had the same blob there with the same mode; it reports whether it
// did, and the file's size. Any failure (another file system, a damaged
// directory) is not an error: the file is then written. A previous file
// over the size limit cannot be there (it was refused when written).
func (w *treeWriter) linkPrevious(p string, e object.TreeEntry, prev map[string]object.TreeEntry) (int64, bool) {
	old, ok := prev[e.Name]
	if !ok || old.Hash != e.Hash || old.Mode != e.Mode {
		return 0, false
	}
	from := filepath.Join(w.prevDir, filepath.FromSlash(p))
	fi, err := os.Lstat(from)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > MaxFileSize {
		return 0, false
	}
	if os.Link(from, filepath.Join(w.dir, filepath.FromSlash(p))) != nil {
		return 0, false
	}
	return fi.Size(), true
}

func (w *treeWriter) tree(t, prevTree *object.Tree, dir string) error {
	var prev map[string]object.TreeEntry
	if prevTree != nil {
		prev = make(map[string]object.TreeEntry, len(prevTree.Entries))
		for _, e := range prevTree.Entries {
			prev[e.Name] = e
		}
	}
	// Names differing only in case are refused, as every other PM refuses
	// them in a package: on a case-insensitive file system (macOS, Windows)
	// one would silently replace or merge into the other.
	folded := make(map[string]string, len(t.Entries))
	for _, e := range t.Entries {
		if err := checkName(e.Name); err != nil {
			return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("tree entry in %s: %v", dir, err)}
		}
		if strings.EqualFold(e.Name, ".git") {
			w.c.log.Warn("skipping .git entry in registry tree", "commit", w.commit, "dir", dir)
			continue
		}
		p := path.Join(dir, e.Name)
		if e.Mode != filemode.Submodule {
			low := strings.ToLower(e.Name)
			if other, ok := folded[low]; ok {
				return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("paths %q and %q differ only in case: they cannot both be checked out on every system; rename one", path.Join(dir, other), p)}
			}
			folded[low] = e.Name
		}
		if err := w.count(); err != nil {
			return err
		}
		switch e.Mode {
		case filemode.Dir:
			sub, err := object.GetTree(w.repo.Storer, e.Hash)
			if err != nil {
				return fmt.Errorf("commit %s: tree %s: %w", w.commit, p, err)
			}
			if err := w.root.Mkdir(p, 0o755); err != nil {
				if errors.Is(err, fs.ErrExist) {
					// Names this file system takes for one (Unicode normalization).
					return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("directory %q collides with another name on this file system", p)}
				}
				return w.writeErr("create directory", p, err)
			}
			var prevSub *object.Tree
			if old, ok := prev[e.Name]; ok && old.Mode == filemode.Dir {
				prevSub, _ = object.GetTree(w.repo.Storer, old.Hash)
			}
			if err := w.tree(sub, prevSub, p); err != nil {
				return err
			}
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			if err := w.file(p, e, prev); err != nil {
				return err
			}
		case filemode.Symlink:
			blob, err := w.repo.BlobObject(e.Hash)
			if err != nil {
				return fmt.Errorf("commit %s: link %s: %w", w.commit, p, err)
			}
			if blob.Size > maxLinkTarget {
				w.c.log.Warn("skipping symbolic link with oversize target", "commit", w.commit, "path", p)
				continue
			}
			target, err := readBlob(blob, maxLinkTarget)
			if err != nil {
				return fmt.Errorf("commit %s: link %s: %w", w.commit, p, err)
			}
			w.symlinks = append(w.symlinks, symlink{path: p, target: string(target)})
		case filemode.Submodule:
			w.c.log.Debug("skipping submodule", "commit", w.commit, "path", p)
		default:
			w.c.log.Warn("skipping tree entry of unknown mode", "commit", w.commit, "path", p, "mode", e.Mode.String())
		}
	}
	return nil
}

func (w *treeWriter) file(p string, e object.TreeEntry, prev map[string]object.TreeEntry) error {
	if prev != nil {
		// An unchanged blob is linked without reading it from the
		// repository: its size is the previous file's.
		if size, ok := w.linkPrevious(p, e, prev); ok {
			w.bytes += size
			if w.bytes > MaxTotalSize {
				return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("tree is over the %d byte limit", MaxTotalSize)}
			}
			w.linked++
			return nil
		}
	}
	blob, err := w.repo.BlobObject(e.Hash)
	if err != nil {
		return fmt.Errorf("commit %s: file %s: %w", w.commit, p, err)
	}
	if blob.Size > MaxFileSize {
		return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("file %s is %d bytes, over the %d limit", p, blob.Size, MaxFileSize)}
	}
	w.bytes += blob.Size
	if w.bytes > MaxTotalSize {
		return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("tree is over the %d byte limit", MaxTotalSize)}
	}
	w.written += blob.Size
	perm := os.FileMode(0o644)
	if e.Mode == filemode.Executable {
		perm = 0o755
	}
	f, err := w.root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if errors.Is(err, fs.ErrExist) {
		// Names this file system takes for one (Unicode normalization).
		return &ContentError{Commit: w.commit, Detail: fmt.Sprintf("file %q collides with another name on this file system", p)}
	}
	if err != nil {
		return w.writeErr("create", p, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		f.Close()
		return fmt.Errorf("commit %s: file %s: %w", w.commit, p, err)
	}
	out := &hookWriter{w: f, path: filepath.Join(w.dir, filepath.FromSlash(p)), hook: w.c.cfg.BeforeWrite}
	_, err = io.Copy(out, io.LimitReader(rd, blob.Size))
	rd.Close()
	cerr := f.Close()
	switch {
	case out.err != nil:
		return w.writeErr("write", p, out.err)
	case err != nil:
		return fmt.Errorf("commit %s: read %s from the repository: %w", w.commit, p, err)
	case cerr != nil:
		return w.writeErr("write", p, cerr)
	}
	return nil
}

// writeErr reports a failure to write p below the commit's directory.
func (w *treeWriter) writeErr(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is given below, in full
	}
	return &WriteError{Dir: w.c.dir, Err: fmt.Errorf("commit %s: %s %s: %w", w.commit, op, filepath.Join(w.dir, filepath.FromSlash(p)), err)}
}

func readBlob(b *object.Blob, max int64) ([]byte, error) {
	rd, err := b.Reader()
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return io.ReadAll(io.LimitReader(rd, max))
}

// links creates the tree's symbolic links, then removes every link that
// does not resolve, through any chain of links, to a regular file inside the
// commit's directory: links to directories (which could form cycles),
// links leaving the tree, dangling links and loops are not kept.
func (w *treeWriter) links() {
	var made []symlink
	for _, l := range w.symlinks {
		if l.target == "" || strings.ContainsRune(l.target, 0) || path.IsAbs(l.target) || filepath.IsAbs(l.target) || filepath.VolumeName(l.target) != "" {
			w.c.log.Warn("not following symbolic link that leaves the registry", "commit", w.commit, "path", l.path, "target", l.target)
			continue
		}
		if err := w.root.Symlink(l.target, l.path); err != nil {
			w.c.log.Warn("cannot create symbolic link", "commit", w.commit, "path", l.path, "err", err)
			continue
		}
		made = append(made, l)
	}
	for changed := true; changed; {
		changed = false
		kept := made[:0]
		for _, l := range made {
			fi, err := w.root.Stat(l.path) // fails when resolution escapes the root
			if err == nil && fi.Mode().IsRegular() {
				kept = append(kept, l)
				continue
			}
			reason := "it does not resolve to a file inside the registry"
			if err != nil {
				reason = err.Error()
			}
			w.c.log.Warn("not following symbolic link", "commit", w.commit, "path", l.path, "target", l.target, "reason", reason)
			w.root.Remove(l.path)
			changed = true
		}
		made = kept
	}
}
