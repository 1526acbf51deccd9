package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// A commit's directory is named after the commit: commits/<id> when it is
// first materialized, commits/<id>-<n> (n = 1, 2, ...) for each copy a
// repair publishes after it (Repair). A directory is written under a
// temporary name and published by renaming it into place, once; it is
// never changed, renamed or removed afterwards while a root of it may be in
// use (by this process or by any other that has the cache open), and its
// name is not published again until it has been collected. The directory
// of a commit is the one of highest n: publishing a repaired copy switches
// every later lookup to it at once, and the copy it replaces stays where it
// is, for the roots already handed out of it, until a collection (collect,
// which runs only when no other process has the cache open) removes it.
//
// Files kept beside a directory (sidecars: <name>.tree, <name>.shared, the
// caller's <name>.index) are named after the directory they describe, so a
// repaired copy never inherits what was said of the copy it replaces.
//
// A directory is removed (removeCommitDir) by renaming it to a tombstone,
// tombPrefix and its name, first: no lookup takes a tombstone for a
// commit's directory, so a removal killed halfway leaves a tombstone, which
// the next collection finishes, never a half-deleted directory under a
// commit's name.

// tombPrefix starts the name a commit directory is renamed to before its
// contents are removed. Like every name starting with ".", it is never a
// commit's directory.
const tombPrefix = ".tomb-"

// maxGenDigits bounds the digits of a repaired copy's number, and maxGen
// the number.
const (
	maxGenDigits = 9
	maxGen       = 999_999_999
)

// splitDirName splits the name of a commit's directory into the commit and
// the copy's number (0 for commits/<id>); ok is false for any other name.
func splitDirName(name string) (commit string, gen int, ok bool) {
	if len(name) < 40 || !IsCommitID(name[:40]) {
		return "", 0, false
	}
	if len(name) == 40 {
		return name, 0, true
	}
	rest := name[40:]
	if rest[0] != '-' || len(rest) < 2 || len(rest) > 1+maxGenDigits || rest[1] == '0' {
		return "", 0, false
	}
	for i := 1; i < len(rest); i++ {
		c := rest[i]
		if c < '0' || c > '9' {
			return "", 0, false
		}
		gen = gen*10 + int(c-'0')
	}
	return name[:40], gen, true
}

// IsDirName reports whether name can name a commit's directory in the
// cache: a full commit id (IsCommitID), alone or followed by "-" and the
// number of a repaired copy (1 or more, no leading zero).
func IsDirName(name string) bool {
	_, _, ok := splitDirName(name)
	return ok
}

// dirName is the name of copy gen of commit's directory.
func dirName(commit string, gen int) string {
	if gen == 0 {
		return commit
	}
	return commit + "-" + strconv.Itoa(gen)
}

// Name returns the name of the snapshot's directory in the cache: what its
// sidecars are named after (Cache.SidecarPath) and what a Share names.
func (s Snapshot) Name() string { return filepath.Base(s.Dir) }

// commitGen finds the directory of commit: of the names of its copies in
// the commits directory, the one of highest number that is a directory.
// It costs a listing of the commits directory (a few names: the commit
// served, those it shares with, and what no collection has removed yet)
// and one stat.
func (c *Cache) commitGen(commit string) (name string, gen int, ok bool) {
	f, err := os.Open(c.commitsDir)
	if err != nil {
		return "", 0, false
	}
	names, _ := f.Readdirnames(-1) // what it listed, should it fail midway
	f.Close()
	var gens []int
	for _, n := range names {
		if !strings.HasPrefix(n, commit) {
			continue
		}
		if cm, g, ok := splitDirName(n); ok && cm == commit {
			gens = append(gens, g)
		}
	}
	slices.Sort(gens)
	for _, g := range slices.Backward(gens) {
		n := dirName(commit, g)
		if fi, err := os.Stat(filepath.Join(c.commitsDir, n)); err == nil && fi.IsDir() {
			return n, g, true
		}
	}
	return "", 0, false
}

// commitDir returns the directory of an already materialized commit.
func (c *Cache) commitDir(commit string) (string, bool) {
	name, _, ok := c.commitGen(commit)
	if !ok {
		return filepath.Join(c.commitsDir, commit), false
	}
	return filepath.Join(c.commitsDir, name), true
}

// Repair replaces the directory of snap's commit, found damaged by the
// caller, by a copy materialized whole from the local repository, without
// the network, and returns it. The copy is published under a name of its
// own (the commit's next copy), which every later lookup of the commit
// finds; snap.Dir is left as it is, so that a root of it handed out to this
// process's host or another's stays valid for its connection, and is
// removed by a collection once no process has the cache open. When snap.Dir
// is no longer the commit's directory (another process repaired it first),
// that directory is returned and nothing is written. A commit the local
// repository cannot materialize is an error, and snap.Dir stays the
// commit's directory.
func (c *Cache) Repair(ctx context.Context, snap Snapshot) (Snapshot, error) {
	if !IsCommitID(snap.Commit) {
		return Snapshot{}, fmt.Errorf("%q is not a full commit id", snap.Commit)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	unlock, err := c.updateLock(ctx)
	if err != nil {
		return Snapshot{}, err
	}
	defer unlock()
	name, gen, ok := c.commitGen(snap.Commit)
	if ok && filepath.Join(c.commitsDir, name) != filepath.Clean(snap.Dir) {
		c.log.Debug("commit already repaired", "commit", snap.Commit, "dir", name)
		return c.hand(Snapshot{Commit: snap.Commit, Dir: filepath.Join(c.commitsDir, name)}), nil
	}
	next := snap.Commit
	if ok {
		if gen >= maxGen {
			return Snapshot{}, fmt.Errorf("commit %s: too many repaired copies in %s", snap.Commit, c.commitsDir)
		}
		next = dirName(snap.Commit, gen+1)
	}
	repo, err := c.openRepo(false)
	if err != nil {
		return Snapshot{}, fmt.Errorf("repair commit %s from %s: %w", snap.Commit, c.repoDir, err)
	}
	h := plumbing.NewHash(snap.Commit)
	if _, err := repo.CommitObject(h); err != nil {
		return Snapshot{}, fmt.Errorf("repair commit %s from %s: %w", snap.Commit, c.repoDir, err)
	}
	out, err := c.materializeAs(ctx, repo, h, nil, next)
	if err != nil {
		return Snapshot{}, err
	}
	c.log.Debug("repaired commit", "commit", snap.Commit, "dir", out.Dir, "replaces", snap.Dir)
	return c.hand(out), nil
}

// removeCommitDir removes the commit directory called name and its
// sidecars so that a process killed at any point leaves nothing a later
// run takes for a commit's directory: the directory is first renamed to a
// tombstone beside it (the same file system: the rename is atomic), which
// unpublishes it at once; then its sidecars go, then the tombstone. Killed
// after the rename, it leaves a tombstone and perhaps sidecars of a name
// no directory has; collect removes both. The caller holds the update
// lock, and the life lock exclusively: no root of the directory is in use.
func (c *Cache) removeCommitDir(name string) error {
	dir := filepath.Join(c.commitsDir, name)
	tomb := filepath.Join(c.commitsDir, tombPrefix+name)
	// A removal of an earlier directory of that name, killed before the
	// end: finished first, so that the rename below has its place.
	if err := c.removeTree(tomb); err != nil {
		return fmt.Errorf("remove %s: %w", tomb, err)
	}
	c.beforeRemove(dir)
	if err := os.Rename(dir, tomb); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", dir, err)
	}
	// The rename reaches the disk before anything of the tree is removed.
	syncDir(c.commitsDir)
	side, _ := filepath.Glob(filepath.Join(c.commitsDir, name+".*"))
	for _, p := range side {
		c.beforeRemove(p)
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("remove %s: %w", p, err)
		}
	}
	if err := c.removeTree(tomb); err != nil {
		return fmt.Errorf("remove %s: %w", tomb, err)
	}
	return nil
}

// beforeRemove calls Config.beforeRemove, when set, with the path about to
// be removed or renamed away.
func (c *Cache) beforeRemove(p string) {
	if c.cfg.beforeRemove != nil {
		c.cfg.beforeRemove(p)
	}
}

// removeTree removes p and everything below it, as os.RemoveAll does; when
// Config.beforeRemove is set, one entry at a time, children first, calling
// it before each.
func (c *Cache) removeTree(p string) error {
	if c.cfg.beforeRemove == nil {
		return os.RemoveAll(p)
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		ents, err := os.ReadDir(p)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if err := c.removeTree(filepath.Join(p, e.Name())); err != nil {
				return err
			}
		}
	}
	c.cfg.beforeRemove(p)
	return os.Remove(p)
}

// syncDir flushes a directory's entries (a rename in it) to the disk, as
// far as the system allows; a failure only loses durability.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
