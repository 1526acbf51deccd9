package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	git "github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/symposium-dev/symposium-pm/sdk/filelock"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// An update normally materializes the new commit into a directory of its
// own, linking the unchanged files from the previous commit's directory: a
// directory made and a file linked per file of the tree, however small the
// change. When no root of the previous commit can be in use — this process
// handed none out, and no other process has the cache open (the life lock
// is taken exclusively for the duration) — the previous commit's directory
// is turned into the new one instead, as git checkout updates a work tree:
// only what changed between the two trees is touched. The new and changed
// files are written first into a staging directory, so that a failure to
// write (a full disk) leaves the previous commit's directory as it was;
// then the previous directory is renamed aside, the changes are applied by
// removes, mkdirs and renames, and it is published under the new commit's
// name. A commit whose tree holds symbolic links, or whose previous
// commit's tree does, is always materialized in full (a change anywhere can
// make a kept link dangle, or a link dropped because it dangled resolve).

// treeStatsSuffix names the sidecar recording what a commit's directory
// holds, which an update in place needs to keep the limits.
const treeStatsSuffix = "tree"

// treeStats is what a materialized commit's directory holds.
type treeStats struct {
	// files counts the entries counted against MaxFiles. links counts the
	// symbolic links of the commit's tree, kept or dropped (a link that
	// dangled is left out of the directory, but a later change can add its
	// target): a directory whose tree holds any is never updated in place,
	// shared from or derived from, since those look only at the entries
	// that changed.
	files, links int
	bytes        int64 // bytes of its files
}

func (s treeStats) String() string {
	return fmt.Sprintf("%d %d %d\n", s.files, s.bytes, s.links)
}

// maxTreeStats bounds the tree sidecar read back: three decimal numbers.
const maxTreeStats = 100

// readTreeStats reads the tree sidecar of the commit directory called
// name; ok is false when it is missing or cannot be used, and the caller
// then does what it does when nothing is known of the commit's directory
// (materializes the next commit in full, derives nothing). The sidecar is read as a cache-owned
// file (pkgfile.ReadOwnFile): a FIFO, a device or a link to one in its
// place is refused once open, never waited on or read, and a file over
// maxTreeStats is refused before it is read. A sidecar that is there but
// cannot be used is a warning naming the file; a missing one (its write
// failed, which was logged then) is not.
func (c *Cache) readTreeStats(name string) (treeStats, bool) {
	p := c.SidecarPath(name, treeStatsSuffix)
	st, err := parseTreeStats(p)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			c.log.Warn("commit's tree sidecar cannot be used; not reusing the commit's directory", "file", p, "err", err)
		}
		return treeStats{}, false
	}
	return st, true
}

// parseTreeStats reads and parses the tree sidecar at p.
func parseTreeStats(p string) (treeStats, error) {
	b, err := pkgfile.ReadOwnFile(p, maxTreeStats)
	if err != nil {
		return treeStats{}, err
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return treeStats{}, fmt.Errorf("%s: %d fields, want 3", p, len(f))
	}
	files, err1 := strconv.Atoi(f[0])
	size, err2 := strconv.ParseInt(f[1], 10, 64)
	links, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil || files < 0 || size < 0 || links < 0 {
		return treeStats{}, fmt.Errorf("%s: %q is not three counts", p, strings.TrimSpace(string(b)))
	}
	return treeStats{files: files, bytes: size, links: links}, nil
}

// hand records that a snapshot was handed to the caller: roots of its
// directory may be in use for as long as the Cache is open.
func (c *Cache) hand(snap Snapshot) Snapshot {
	if snap.Commit != "" {
		c.hmu.Lock()
		c.handed[snap.Name()] = true
		c.hmu.Unlock()
	}
	return snap
}

// handedShareWith reports whether a directory handed out shares entries
// with the commit directory called name (share.go), or cannot tell: roots
// handed out then lie in that directory too.
func (c *Cache) handedShareWith(name string) bool {
	c.hmu.Lock()
	handed := slices.Collect(maps.Keys(c.handed))
	c.hmu.Unlock()
	for _, h := range handed {
		homes, err := c.sharedHomes(h)
		if err != nil || slices.Contains(homes, name) {
			return true
		}
	}
	return false
}

// wasHanded reports whether the commit directory called name was handed
// out.
func (c *Cache) wasHanded(name string) bool {
	c.hmu.Lock()
	defer c.hmu.Unlock()
	return c.handed[name]
}

// op is one change applied to the previous commit's directory.
type op struct {
	kind  opKind
	path  string // slash-separated, relative to the commit's directory
	entry object.TreeEntry
	size  int64
}

type opKind int

const (
	opRemove opKind = iota + 1
	opMkdir
	opPut
)

// errNotInPlace reports a change an update in place does not handle; the
// commit is then materialized in full.
var errNotInPlace = errors.New("not an update in place")

// planner diffs two trees into ops, checking the new tree's names as
// materialize does.
type planner struct {
	repo   *git.Repository
	commit string
	ops    []op
	added  treeStats // entries and bytes added
	gone   treeStats // entries and bytes removed
	// maxFile is the file size cap in force (Cache.treeLimits).
	maxFile int64
}

func (pl *planner) blobSize(h plumbing.Hash) (int64, error) {
	return pl.repo.Storer.EncodedObjectSize(h)
}

// diff plans the changes turning tree a into tree b below dir.
func (pl *planner) diff(a, b *object.Tree, dir string) error {
	old := make(map[string]object.TreeEntry, len(a.Entries))
	for _, e := range a.Entries {
		old[e.Name] = e
	}
	top := dir
	if top == "." {
		top = ""
	}
	if err := checkEntries(pl.commit, b, top); err != nil {
		return err
	}
	seen := make(map[string]bool, len(b.Entries))
	for _, e := range b.Entries {
		if strings.EqualFold(e.Name, ".git") {
			continue
		}
		p := path.Join(dir, e.Name)
		seen[e.Name] = true
		prev, had := old[e.Name]
		if had && prev.Hash == e.Hash && prev.Mode == e.Mode {
			continue // unchanged, whole subtree included
		}
		if e.Mode == filemode.Symlink || (had && prev.Mode == filemode.Symlink) {
			return errNotInPlace
		}
		if e.Mode == filemode.Dir && had && prev.Mode == filemode.Dir {
			at, err := object.GetTree(pl.repo.Storer, prev.Hash)
			if err != nil {
				return errNotInPlace
			}
			bt, err := object.GetTree(pl.repo.Storer, e.Hash)
			if err != nil {
				return fmt.Errorf("commit %s: tree %s: %w", pl.commit, p, err)
			}
			if err := pl.diff(at, bt, p); err != nil {
				return err
			}
			continue
		}
		if had {
			if err := pl.remove(prev, p); err != nil {
				return err
			}
		}
		if err := pl.add(e, p); err != nil {
			return err
		}
	}
	for _, e := range a.Entries {
		if !seen[e.Name] && !strings.EqualFold(e.Name, ".git") {
			if e.Mode == filemode.Symlink {
				return errNotInPlace
			}
			if err := pl.remove(e, path.Join(dir, e.Name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// remove plans the removal of the previous tree's entry e at p, counting
// what it held.
func (pl *planner) remove(e object.TreeEntry, p string) error {
	pl.ops = append(pl.ops, op{kind: opRemove, path: p})
	return pl.count(e, &pl.gone)
}

// count adds what e holds, recursively, to s.
func (pl *planner) count(e object.TreeEntry, s *treeStats) error {
	s.files++
	switch e.Mode {
	case filemode.Dir:
		t, err := object.GetTree(pl.repo.Storer, e.Hash)
		if err != nil {
			return errNotInPlace
		}
		for _, sub := range t.Entries {
			if strings.EqualFold(sub.Name, ".git") {
				continue
			}
			if sub.Mode == filemode.Symlink {
				return errNotInPlace
			}
			if err := pl.count(sub, s); err != nil {
				return err
			}
		}
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		n, err := pl.blobSize(e.Hash)
		if err != nil {
			return errNotInPlace
		}
		s.bytes += n
	}
	return nil
}

// add plans the new tree's entry e at p: a directory with everything in it,
// or a file.
func (pl *planner) add(e object.TreeEntry, p string) error {
	pl.added.files++
	if pl.added.files > MaxFiles {
		return &ContentError{Commit: pl.commit, Detail: fmt.Sprintf("more than %d files", MaxFiles)}
	}
	switch e.Mode {
	case filemode.Dir:
		t, err := object.GetTree(pl.repo.Storer, e.Hash)
		if err != nil {
			return fmt.Errorf("commit %s: tree %s: %w", pl.commit, p, err)
		}
		pl.ops = append(pl.ops, op{kind: opMkdir, path: p})
		return pl.diff(&object.Tree{}, t, p)
	case filemode.Regular, filemode.Deprecated, filemode.Executable:
		n, err := pl.blobSize(e.Hash)
		if err != nil {
			return fmt.Errorf("commit %s: file %s: %w", pl.commit, p, err)
		}
		if n > pl.maxFile {
			return &ContentError{Commit: pl.commit, Detail: fmt.Sprintf("file %s is %d bytes, over the %d limit", p, n, pl.maxFile)}
		}
		pl.added.bytes += n
		pl.ops = append(pl.ops, op{kind: opPut, path: p, entry: e, size: n})
	}
	// Submodules and entries of unknown modes are not written, as in a
	// full materialization; they still count.
	return nil
}

// updateInPlace turns the directory of the previous commit prev into the
// new commit's, when that is safe (see above). It reports false, with no
// error, when the update must materialize the commit in full instead.
func (c *Cache) updateInPlace(ctx context.Context, prev string, commit plumbing.Hash) (Snapshot, bool, error) {
	id := commit.String()
	if _, ok := c.commitDir(id); ok || prev == id {
		return Snapshot{}, false, nil
	}
	prevDir, ok := c.commitDir(prev)
	if !ok {
		return Snapshot{}, false, nil
	}
	prevName := filepath.Base(prevDir)
	if c.wasHanded(prevName) {
		return Snapshot{}, false, nil
	}
	stats, ok := c.readTreeStats(prevName)
	if !ok || stats.links > 0 {
		return Snapshot{}, false, nil
	}
	if homes, err := c.sharedHomes(prevName); err != nil || len(homes) > 0 {
		return Snapshot{}, false, nil // it does not hold its whole tree
	}
	if c.handedShareWith(prevName) {
		return Snapshot{}, false, nil // roots of another commit lie in it
	}
	if c.cfg.Reusable != nil && !c.cfg.Reusable(prev, prevDir) {
		c.log.Debug("previous commit's directory may be damaged; materializing the new one beside it", "commit", prev)
		return Snapshot{}, false, nil
	}
	repo, done, err := c.openReader()
	if err != nil {
		return Snapshot{}, false, nil
	}
	defer done()
	oldTree, err := c.commitTree(repo, plumbing.NewHash(prev))
	if err != nil {
		return Snapshot{}, false, nil
	}
	newTree, err := c.commitTree(repo, commit)
	if err != nil {
		return Snapshot{}, false, err
	}
	maxFile, maxTotal := c.treeLimits()
	pl := &planner{repo: repo, commit: id, maxFile: maxFile}
	if err := pl.diff(oldTree, newTree, "."); err != nil {
		if errors.Is(err, errNotInPlace) {
			return Snapshot{}, false, nil
		}
		return Snapshot{}, false, err
	}
	next := treeStats{files: stats.files - pl.gone.files + pl.added.files, bytes: stats.bytes - pl.gone.bytes + pl.added.bytes}
	if err := checkTotals(id, next, maxTotal); err != nil {
		return Snapshot{}, false, err
	}

	// Alone with the cache, or not at all.
	excl, err := c.life.TryLock(filelock.Exclusive)
	if err != nil || !excl {
		// Changing the mode may have dropped the shared lock: take it again.
		if lerr := c.life.Lock(ctx, filelock.Shared); lerr != nil && !errors.Is(lerr, errors.ErrUnsupported) {
			return Snapshot{}, false, lerr
		}
		return Snapshot{}, false, nil
	}
	defer c.life.Lock(context.WithoutCancel(ctx), filelock.Shared)

	stage, err := os.MkdirTemp(c.commitsDir, ".tmp-"+id[:12]+"-stage-")
	if err != nil {
		return Snapshot{}, false, &WriteError{Dir: c.dir, Err: fmt.Errorf("create a directory in %s: %w", c.commitsDir, err)}
	}
	defer os.RemoveAll(stage)
	for i, o := range pl.ops {
		if o.kind != opPut {
			continue
		}
		if err := c.stageBlob(repo, id, filepath.Join(stage, strconv.Itoa(i)), o); err != nil {
			return Snapshot{}, false, err
		}
	}

	tmp := filepath.Join(c.commitsDir, ".tmp-"+id[:12]+"-inplace")
	if err := os.RemoveAll(tmp); err != nil {
		return Snapshot{}, false, &WriteError{Dir: c.dir, Err: err}
	}
	if err := os.Rename(prevDir, tmp); err != nil {
		return Snapshot{}, false, nil // the previous directory stays; materialize in full
	}
	// From here on the previous commit's directory is gone: its sidecars
	// describe nothing, and a failure leaves it to be materialized again.
	c.removeSidecars(prevName)
	if err := applyOps(tmp, stage, pl.ops); err != nil {
		os.RemoveAll(tmp)
		return Snapshot{}, false, &WriteError{Dir: c.dir, Err: fmt.Errorf("commit %s: %w", id, err)}
	}
	// It holds its whole tree: any list of what a directory of this commit
	// shared (left by a materialization killed before publishing it) goes
	// (sharedSuffix).
	dir, _, err := c.publishDir(tmp, id, nil)
	if err != nil {
		os.RemoveAll(tmp)
		return Snapshot{}, false, err
	}
	if err := c.WriteSidecar(id, treeStatsSuffix, []byte(next.String())); err != nil {
		c.log.Debug("cannot record the commit's tree", "commit", id, "err", err)
	}
	c.log.Debug("updated commit in place", "commit", id, "from", prev, "changes", len(pl.ops), "written", pl.added.bytes)
	return Snapshot{Commit: id, Dir: dir}, true, nil
}

// checkTotals refuses a commit whose tree, as totals counts it, is over the
// limits (MaxFiles, maxTotal bytes).
func checkTotals(commit string, totals treeStats, maxTotal int64) error {
	if totals.files > MaxFiles || totals.files < 0 {
		return &ContentError{Commit: commit, Detail: fmt.Sprintf("more than %d files", MaxFiles)}
	}
	if totals.bytes > maxTotal || totals.bytes < 0 {
		return &ContentError{Commit: commit, Detail: fmt.Sprintf("tree is over the %d byte limit", maxTotal)}
	}
	return nil
}

// commitTree returns a commit's tree, or its configured subdir.
func (c *Cache) commitTree(repo *git.Repository, h plumbing.Hash) (*object.Tree, error) {
	cm, err := repo.CommitObject(h)
	if err != nil {
		return nil, err
	}
	t, err := cm.Tree()
	if err != nil {
		return nil, err
	}
	if c.cfg.Subdir != "" {
		if t, err = t.Tree(c.cfg.Subdir); err != nil {
			return nil, &ContentError{Commit: h.String(), Detail: fmt.Sprintf("subdir %q is not a directory in the repository", c.cfg.Subdir)}
		}
	}
	return t, nil
}

// stageBlob writes the blob of o into the staging file p.
func (c *Cache) stageBlob(repo *git.Repository, commit, p string, o op) error {
	blob, err := repo.BlobObject(o.entry.Hash)
	if err != nil {
		return fmt.Errorf("commit %s: file %s: %w", commit, o.path, err)
	}
	perm := os.FileMode(0o644)
	if o.entry.Mode == filemode.Executable {
		perm = 0o755
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return &WriteError{Dir: c.dir, Err: fmt.Errorf("commit %s: create %s: %w", commit, p, err)}
	}
	rd, err := blob.Reader()
	if err != nil {
		f.Close()
		return fmt.Errorf("commit %s: file %s: %w", commit, o.path, err)
	}
	out := &hookWriter{w: f, path: p, hook: c.cfg.BeforeWrite}
	_, err = io.Copy(out, io.LimitReader(rd, blob.Size))
	rd.Close()
	cerr := f.Close()
	switch {
	case out.err != nil:
		return &WriteError{Dir: c.dir, Err: fmt.Errorf("commit %s: write %s: %w", commit, p, out.err)}
	case err != nil:
		return fmt.Errorf("commit %s: read %s from the repository: %w", commit, o.path, err)
	case cerr != nil:
		return &WriteError{Dir: c.dir, Err: fmt.Errorf("commit %s: write %s: %w", commit, p, cerr)}
	}
	// The mode a checkout gives, whatever the umask.
	return os.Chmod(p, perm)
}

// applyOps applies the planned changes to dir, renaming staged files into
// place. Paths come from checked tree names and the tree holds no symbolic
// links, so they stay inside dir.
func applyOps(dir, stage string, ops []op) error {
	for i, o := range ops {
		p := filepath.Join(dir, filepath.FromSlash(o.path))
		var err error
		switch o.kind {
		case opRemove:
			err = os.RemoveAll(p)
		case opMkdir:
			err = os.Mkdir(p, 0o755)
			if errors.Is(err, fs.ErrExist) {
				err = fmt.Errorf("directory %q collides with another name on this file system", o.path)
			}
		case opPut:
			if _, lerr := os.Lstat(p); lerr == nil {
				err = fmt.Errorf("file %q collides with another name on this file system", o.path)
				break
			}
			err = os.Rename(filepath.Join(stage, strconv.Itoa(i)), p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// removeSidecars removes the files kept beside the commit directory called
// name.
func (c *Cache) removeSidecars(name string) {
	side, _ := filepath.Glob(filepath.Join(c.commitsDir, name+".*"))
	for _, p := range side {
		os.Remove(p)
	}
}
