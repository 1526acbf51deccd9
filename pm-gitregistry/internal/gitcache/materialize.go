package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"os"
	"path/filepath"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
)

// Limits on what one commit may materialize.
const (
	// MaxFileSize is the largest file written.
	MaxFileSize = 64 << 20
	// MaxTotalSize bounds the bytes of all files of a commit.
	MaxTotalSize = 1 << 30
	// MaxFiles bounds the files, directories and links of a commit.
	MaxFiles = 200_000
)

// packLimit is the fetched pack's cap in force: MaxPackSize unless
// Config.limits (set by tests only) lowers it.
func (c *Cache) packLimit() int64 {
	if c.cfg.limits.pack > 0 {
		return c.cfg.limits.pack
	}
	return MaxPackSize
}

// treeLimits are the file and commit size caps in force: MaxFileSize and
// MaxTotalSize unless Config.limits (set by tests only) lowers them.
func (c *Cache) treeLimits() (file, total int64) {
	file, total = MaxFileSize, MaxTotalSize
	if c.cfg.limits.file > 0 {
		file = c.cfg.limits.file
	}
	if c.cfg.limits.total > 0 {
		total = c.cfg.limits.total
	}
	return file, total
}

// materialize writes the commit's tree (or its subdir) into its own
// directory, through a temporary directory renamed into place, leaving out
// the directories of share whose subtree is the same in the commit served
// before (share.go; nil shares nothing), unless the commit has a directory
// already. The caller holds the update lock.
func (c *Cache) materialize(ctx context.Context, repo *git.Repository, commit plumbing.Hash, share Share) (Snapshot, error) {
	id := commit.String()
	if dir, ok := c.commitDir(id); ok {
		return Snapshot{Commit: id, Dir: dir}, nil
	}
	return c.materializeAs(ctx, repo, commit, share, id)
}

// materializeAs is materialize publishing the directory as name (repair.go:
// the commit's id, or the name of a repaired copy), which no directory has.
// The caller holds the update lock.
func (c *Cache) materializeAs(ctx context.Context, repo *git.Repository, commit plumbing.Hash, share Share, name string) (Snapshot, error) {
	id := commit.String()
	// Objects are read through a reader keeping the pack files open; the
	// repository given was needed only to fetch.
	if rd, done, err := c.openReader(); err == nil {
		defer done()
		repo = rd
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
	maxFile, maxTotal := c.treeLimits()
	w := &treeWriter{repo: repo, dir: tmp, commit: id, c: c}
	prevTree := w.previous(tree)
	var total treeStats
	if share != nil {
		if share, total, err = c.shareable(share, repo, filepath.Base(w.prevDir), prevTree, id, tree); err != nil {
			root.Close()
			return Snapshot{}, err
		}
		w.share, w.shared = share, Share{}
	}
	res, err := archive.ExtractEntries(ctx, w.entries(tree, prevTree), root, archive.Options{
		// Absolute caps: a pack's size says nothing of what its blobs
		// expand to, so there is no ratio cap.
		Limits: archive.Limits{MaxBytes: maxTotal, MaxEntries: MaxFiles, MaxFile: maxFile},
		Links:  archive.KeepLinksInside,
		OnDrop: func(name, reason string) {
			c.log.Warn("not following symbolic link", "commit", id, "path", name, "reason", reason)
		},
		BeforeWrite: w.beforeWrite(),
	})
	root.Close()
	if err != nil {
		return Snapshot{}, w.fail(err)
	}
	// Hand the directory out with the permissions of an ordinary checkout.
	os.Chmod(tmp, 0o755)
	// Every link of the tree counts, those dropped too (res.Links counts
	// only the links kept).
	stats := treeStats{files: res.Entries, bytes: res.Bytes, links: w.links}
	if len(w.shared) > 0 {
		stats = total
	}
	// What it shares is recorded with it (sharedSuffix).
	dir, won, err := c.publishDir(tmp, name, w.shared)
	if err != nil {
		return Snapshot{}, err
	}
	if !won {
		return Snapshot{Commit: id, Dir: dir}, nil
	}
	if err := c.WriteSidecar(name, treeStatsSuffix, []byte(stats.String())); err != nil {
		c.log.Debug("cannot record the commit's tree", "commit", id, "err", err)
	}
	c.log.Debug("materialized commit", "commit", id, "dir", dir, "files", res.Entries, "bytes", res.Bytes, "linked", res.Reused, "written", res.Written, "shared", len(w.shared))
	return Snapshot{Commit: id, Dir: dir}, nil
}

// treeWriter lists a git tree as archive entries, so that it is written
// under the one rule set of package archive; it keeps only git's own
// concerns: which entries exist, skipping ".git", and reusing the files of
// the commit served before.
type treeWriter struct {
	c      *Cache
	repo   *git.Repository
	dir    string // the directory the tree is written to
	commit string
	// prevDir is the directory of the commit served before this one, whose
	// unchanged files are hard-linked instead of written; empty for none.
	// prevCommit is that commit, and prevShared what its directory shares
	// (the files of those directories are linked from where they are, the
	// directories named by their names: repair.go).
	prevDir, prevCommit string
	prevShared          Share
	// share is what the tree may leave out of its directory (share.go),
	// and shared what it did.
	share, shared Share
	// links counts the symbolic links of the tree walked, whether package
	// archive keeps them or drops them.
	links int
}

// beforeWrite is Config.BeforeWrite for the files of the tree, which it
// is given by their full paths.
func (w *treeWriter) beforeWrite() func(string, int) error {
	hook := w.c.cfg.BeforeWrite
	if hook == nil {
		return nil
	}
	return func(name string, n int) error {
		return hook(filepath.Join(w.dir, filepath.FromSlash(name)), n)
	}
}

// fail turns an extraction's failure into the cache's errors: the tree's
// content (ContentError), the repository's (a plain error) or the
// disk's (WriteError).
func (w *treeWriter) fail(err error) error {
	var ae *archive.Error
	var se *archive.SourceError
	switch {
	case errors.As(err, &ae):
		return &ContentError{Commit: w.commit, Detail: ae.Error()}
	case errors.As(err, &se):
		return fmt.Errorf("commit %s: %w", w.commit, se)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return &WriteError{Dir: w.c.dir, Err: fmt.Errorf("commit %s: %w", w.commit, err)}
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
	shared, err := w.c.Shared(filepath.Base(dir))
	if err != nil {
		w.c.log.Debug("cannot read what the previous commit shares; its files there are written again", "commit", st.Commit, "err", err)
	}
	w.prevDir, w.prevCommit, w.prevShared = dir, st.Commit, shared
	return prev
}

// entries lists tree t, parents first, as archive entries; prev is the
// previous commit's tree at the same place, or nil.
func (w *treeWriter) entries(t, prev *object.Tree) iter.Seq2[archive.Entry, error] {
	return func(yield func(archive.Entry, error) bool) {
		w.walk(t, prev, "", yield)
	}
}

// walk yields the entries of t below dir ("" for the top); it reports
// false once yield asked to stop.
func (w *treeWriter) walk(t, prevTree *object.Tree, dir string, yield func(archive.Entry, error) bool) bool {
	var prev map[string]object.TreeEntry
	if prevTree != nil {
		prev = make(map[string]object.TreeEntry, len(prevTree.Entries))
		for _, e := range prevTree.Entries {
			prev[e.Name] = e
		}
	}
	for _, e := range t.Entries {
		name, err := entryName(dir, e.Name)
		if err != nil {
			return yield(archive.Entry{}, err)
		}
		if strings.EqualFold(e.Name, ".git") {
			w.c.log.Warn("skipping .git entry in registry tree", "commit", w.commit, "path", name)
			continue
		}
		var ent archive.Entry
		switch e.Mode {
		case filemode.Dir:
			if home, ok := w.share[name]; ok {
				if old, had := prev[e.Name]; had && old.Mode == filemode.Dir && old.Hash == e.Hash {
					w.shared[name] = home // unchanged: stays where it is
					continue
				}
			}
			if !yield(archive.Entry{Name: name, Type: archive.Dir}, nil) {
				return false
			}
			sub, err := object.GetTree(w.repo.Storer, e.Hash)
			if err != nil {
				return yield(archive.Entry{}, fmt.Errorf("tree %s: %w", name, err))
			}
			var prevSub *object.Tree
			if old, ok := prev[e.Name]; ok && old.Mode == filemode.Dir {
				prevSub, _ = object.GetTree(w.repo.Storer, old.Hash)
			}
			if !w.walk(sub, prevSub, name, yield) {
				return false
			}
			continue
		case filemode.Regular, filemode.Deprecated, filemode.Executable:
			if ent, err = w.file(name, e, prev); err != nil {
				return yield(archive.Entry{}, err)
			}
		case filemode.Symlink:
			w.links++
			if ent, err = w.blob(name, e); err != nil {
				return yield(archive.Entry{}, err)
			}
			ent.Type = archive.Symlink
		case filemode.Submodule:
			w.c.log.Debug("skipping submodule", "commit", w.commit, "path", name)
			ent = archive.Entry{Name: name, Type: archive.Placeholder}
		default:
			w.c.log.Warn("skipping tree entry of unknown mode", "commit", w.commit, "path", name, "mode", e.Mode.String())
			ent = archive.Entry{Name: name, Type: archive.Placeholder}
		}
		if !yield(ent, nil) {
			return false
		}
	}
	return true
}

// blob is the entry of a blob: its size and a reader of its content.
func (w *treeWriter) blob(name string, e object.TreeEntry) (archive.Entry, error) {
	blob, err := w.repo.BlobObject(e.Hash)
	if err != nil {
		return archive.Entry{}, fmt.Errorf("%s: %w", name, err)
	}
	return archive.Entry{Name: name, Size: blob.Size, Open: blob.Reader}, nil
}

// file is the entry of a regular file. When the previous commit had the
// same blob there with the same mode, the file is hard-linked from its
// directory, without reading the blob (its size is the previous file's);
// any failure to link (another file system, a damaged directory) falls
// back to writing it.
func (w *treeWriter) file(name string, e object.TreeEntry, prev map[string]object.TreeEntry) (archive.Entry, error) {
	typ := archive.Regular
	if e.Mode == filemode.Executable {
		typ = archive.Executable
	}
	if old, ok := prev[e.Name]; ok && old.Hash == e.Hash && old.Mode == e.Mode {
		from := filepath.Join(w.prevDir, filepath.FromSlash(name))
		if home, ok := w.prevShared.Holder(name); ok {
			from = filepath.Join(w.c.commitsDir, home, filepath.FromSlash(name))
		}
		if fi, err := os.Lstat(from); err == nil && fi.Mode().IsRegular() {
			size := fi.Size()
			open := func() (io.ReadCloser, error) {
				blob, err := w.repo.BlobObject(e.Hash)
				if err != nil {
					return nil, err
				}
				if blob.Size != size {
					return nil, fmt.Errorf("the previous commit's copy is %d bytes, the blob %d", size, blob.Size)
				}
				return blob.Reader()
			}
			reuse := func(root *os.Root, rel string) bool {
				return os.Link(from, filepath.Join(root.Name(), filepath.FromSlash(rel))) == nil
			}
			return archive.Entry{Name: name, Type: typ, Size: size, Open: open, Reuse: reuse}, nil
		}
	}
	ent, err := w.blob(name, e)
	ent.Type = typ
	return ent, err
}

// entryName is the path of the tree entry called name in the directory dir
// ("" for the top). A name holding a "/" is refused: git's format gives
// one path component per entry, and the rule against ".git" entries looks
// at components.
func entryName(dir, name string) (string, error) {
	p := name
	if dir != "" {
		p = dir + "/" + name
	}
	if strings.Contains(name, "/") {
		return "", &archive.Error{Entry: p, Reason: "is a tree entry whose name holds a \"/\""}
	}
	return p, nil
}

// entryType is what a git tree entry of mode m is to package archive:
// submodules and unknown modes are counted but not written.
func entryType(m filemode.FileMode) archive.Type {
	switch m {
	case filemode.Dir:
		return archive.Dir
	case filemode.Regular, filemode.Deprecated:
		return archive.Regular
	case filemode.Executable:
		return archive.Executable
	case filemode.Symlink:
		return archive.Symlink
	}
	return archive.Placeholder
}

// checkEntries applies package archive's rules (names, duplicates, case
// collisions) to the entries of t, the directory dir of the new commit
// ("" for the top), writing nothing: an update in place does not write
// the whole tree through ExtractEntries.
func checkEntries(commit string, t *object.Tree, dir string) error {
	list := func(yield func(archive.Entry, error) bool) {
		if dir != "" {
			parts := strings.Split(dir, "/")
			for i := range parts {
				if !yield(archive.Entry{Name: strings.Join(parts[:i+1], "/"), Type: archive.Dir}, nil) {
					return
				}
			}
		}
		for _, e := range t.Entries {
			name, err := entryName(dir, e.Name)
			if err != nil {
				yield(archive.Entry{}, err)
				return
			}
			if strings.EqualFold(e.Name, ".git") {
				continue
			}
			if !yield(archive.Entry{Name: name, Type: entryType(e.Mode)}, nil) {
				return
			}
		}
	}
	opts := archive.Options{Limits: archive.Limits{MaxBytes: math.MaxInt64}, Links: archive.KeepLinksInside}
	if _, err := archive.ExtractEntries(context.Background(), list, nil, opts); err != nil {
		var ae *archive.Error
		if errors.As(err, &ae) {
			return &ContentError{Commit: commit, Detail: ae.Error()}
		}
		return fmt.Errorf("commit %s: %w", commit, err)
	}
	return nil
}
