package gitcache

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// Changes is what an update changed: the paths that differ between the
// tree of the commit served before and the tree of the commit served now,
// so that whatever a caller derived from the previous commit's directory
// (an index of its entries) can be derived again for the changed paths
// only.
type Changes struct {
	// From is the commit served before the update.
	From string
	// Paths are the paths that differ, relative to the commit's directory
	// (the configured subdir), slash-separated, in tree order. A directory
	// added or removed as a whole, or replaced by a file or a file by it,
	// is one path with Dir set; nothing below it is listed.
	Paths []ChangedPath
}

// ChangedPath is one path that differs between two commits' trees.
type ChangedPath struct {
	// Path is slash-separated, relative to the commit's directory.
	Path string
	// Dir is set when the path is a directory in either tree (so
	// everything below it may have changed).
	Dir bool
}

// MaxChanges bounds the paths UpdateChanges reports; an update changing
// more reports no changes (the caller derives everything again).
const MaxChanges = 20_000

// Served returns the commit the cache serves (as state.json records it) and
// its directory, without touching the network, materializing anything or
// handing the directory out; ok is false when no commit is served or its
// directory is missing.
func (c *Cache) Served() (Snapshot, bool) {
	st, err := c.readState()
	if err != nil {
		return Snapshot{}, false
	}
	dir, ok := c.commitDir(st.Commit)
	return Snapshot{Commit: st.Commit, Dir: dir}, ok
}

// UpdateChanges is Update, also reporting what changed when the commit
// served changed: nil when that is not known exactly, and then everything
// is to be derived again (the first update, a commit pinned by id, a tree
// holding symbolic links — a link that did not change can still point at
// a file that did, or dangle —, a previous commit no longer in the
// repository, more than MaxChanges paths).
func (c *Cache) UpdateChanges(ctx context.Context, mode Mode) (Snapshot, bool, *Changes, error) {
	return c.UpdateSharing(ctx, mode, nil)
}

// UpdateSharing is UpdateChanges, letting the new commit's directory leave
// out the unchanged directories that share (share.go) names, asked with
// the name of the directory of the commit served before (Snapshot.Name)
// when the new commit is materialized beside it (roots of it may be in
// use). share may be nil.
func (c *Cache) UpdateSharing(ctx context.Context, mode Mode, share func(prev string) Share) (Snapshot, bool, *Changes, error) {
	// What the previous commit held is read before the update: an update
	// in place removes it.
	before, ok := c.Served()
	linksBefore := true
	if ok {
		stats, sok := c.readTreeStats(before.Name())
		linksBefore = !sok || stats.links > 0
	}
	snap, changed, err := c.updateSharing(ctx, mode, share)
	if err != nil || !changed || !ok || linksBefore {
		return snap, changed, nil, err
	}
	stats, sok := c.readTreeStats(snap.Name())
	if !sok || stats.links > 0 {
		return snap, changed, nil, nil
	}
	ch, err := c.changes(before.Commit, snap.Commit)
	if err != nil {
		c.log.Debug("cannot list the changes of the update; the caller derives everything again", "from", before.Commit, "to", snap.Commit, "err", err)
		return snap, changed, nil, nil
	}
	return snap, changed, ch, nil
}

// errTooManyChanges stops a diff past MaxChanges.
var errTooManyChanges = errors.New("too many changes")

// changes diffs the trees (or configured subdirs) of two commits in the
// local repository.
func (c *Cache) changes(from, to string) (*Changes, error) {
	repo, done, err := c.openReader()
	if err != nil {
		return nil, err
	}
	defer done()
	a, err := c.commitTree(repo, plumbing.NewHash(from))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", from, err)
	}
	b, err := c.commitTree(repo, plumbing.NewHash(to))
	if err != nil {
		return nil, fmt.Errorf("commit %s: %w", to, err)
	}
	d := &differ{get: func(h plumbing.Hash) (*object.Tree, error) { return object.GetTree(repo.Storer, h) }}
	if err := d.diff(a, b, ""); err != nil {
		return nil, err
	}
	return &Changes{From: from, Paths: d.out}, nil
}

// differ lists the paths that differ between two trees, skipping every
// subtree whose id did not change.
type differ struct {
	get func(plumbing.Hash) (*object.Tree, error)
	out []ChangedPath
}

func (d *differ) add(p string, dir bool) error {
	if len(d.out) >= MaxChanges {
		return errTooManyChanges
	}
	d.out = append(d.out, ChangedPath{Path: p, Dir: dir})
	return nil
}

// diff compares tree a with tree b below dir ("" for the top).
func (d *differ) diff(a, b *object.Tree, dir string) error {
	old := make(map[string]object.TreeEntry, len(a.Entries))
	for _, e := range a.Entries {
		old[e.Name] = e
	}
	for _, e := range b.Entries {
		if strings.EqualFold(e.Name, ".git") {
			continue // never materialized
		}
		p := path.Join(dir, e.Name)
		prev, had := old[e.Name]
		delete(old, e.Name)
		switch {
		case had && prev.Hash == e.Hash && prev.Mode == e.Mode:
			continue
		case had && prev.Mode == filemode.Dir && e.Mode == filemode.Dir:
			at, err := d.get(prev.Hash)
			if err != nil {
				return fmt.Errorf("tree %s: %w", p, err)
			}
			bt, err := d.get(e.Hash)
			if err != nil {
				return fmt.Errorf("tree %s: %w", p, err)
			}
			if err := d.diff(at, bt, p); err != nil {
				return err
			}
		default:
			if err := d.add(p, e.Mode == filemode.Dir || (had && prev.Mode == filemode.Dir)); err != nil {
				return err
			}
		}
	}
	for _, e := range a.Entries {
		if _, gone := old[e.Name]; gone && !strings.EqualFold(e.Name, ".git") {
			if err := d.add(path.Join(dir, e.Name), e.Mode == filemode.Dir); err != nil {
				return err
			}
		}
	}
	return nil
}
