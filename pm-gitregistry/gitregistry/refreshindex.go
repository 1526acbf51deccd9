package gitregistry

import (
	"context"
	"errors"
	"io/fs"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
)

// A refresh that moves the registry to another commit leaves that commit's
// index persisted, so that no hook pays for reading the tree: derived from
// the previous commit's index and the paths the update changed (reading
// only the entries the change can have touched, derive.go) when the
// previous index is intact and its commit's directory was whole, or else
// built from the tree.

// previous is the persisted index of the commit served before an update,
// read while that commit's directory is still there (an update in place
// removes both), and decoded only once the update changed the commit.
type previous struct {
	commit string
	name   string // the name of its directory (gitcache.Snapshot.Name)
	data   []byte // the whole file; nil when unusable
	idx    *index // from memory, when this process loaded it
}

// previousIndex reads the persisted index of the commit served now, keeping
// it only when its head is intact (checksum, format, commit) and the stamps
// of the directory hold. An index that is there but cannot be read (a FIFO
// or a device in its place, a file over maxIndexFile: openIndex) or whose
// head is damaged is a warning naming the file; the next commit's index is
// then built from its tree.
func (p *PM) previousIndex(c *gitcache.Cache) previous {
	before, ok := c.Served()
	if !ok {
		return previous{}
	}
	side := c.SidecarPath(before.Name(), indexSuffix)
	data, err := readIndexFile(side)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.log.Warn("persisted registry index cannot be read; an update does not derive the next commit's from it", "file", side, "err", err)
		}
		return previous{}
	}
	_, stamps, err := decodeHead(data, before.Commit)
	if err != nil {
		p.log.Warn("persisted registry index cannot be used; an update does not derive the next commit's from it", "file", side, "err", err)
		return previous{}
	}
	if !stampsHold(before.Dir, stamps) {
		return previous{}
	}
	p.mu.Lock()
	idx := p.indexes[before.Dir]
	p.mu.Unlock()
	return previous{commit: before.Commit, name: before.Name(), data: data, idx: idx}
}

// index decodes the previous index; nil when it is not intact.
func (pr previous) index() *index {
	if pr.idx != nil || pr.data == nil {
		return pr.idx
	}
	idx, _, err := decodeIndex(pr.data, pr.commit)
	if err != nil {
		return nil
	}
	return idx
}

// indexUpdate persists the index of the commit an update moved to:
// derived from pr, the previous commit's index, when the update's
// changes are known and start from prev's commit; built from the tree
// otherwise.
func (p *PM) indexUpdate(ctx context.Context, c *gitcache.Cache, snap gitcache.Snapshot, pr previous, changes *gitcache.Changes) {
	if prev := pr.index(); prev != nil && changes != nil && changes.From == prev.Commit {
		idx, parsed, ok := deriveIndex(prev, snap.Dir, snap.Commit, changes.Paths)
		if ok {
			if share, err := c.Shared(snap.Name()); err != nil || len(share) > 0 && !withHomes(idx, share) {
				// The directory left out something the new index needs
				// where it is: it is materialized whole.
				whole, err := p.unshare(ctx, c, snap)
				if err != nil {
					p.log.Warn("cannot materialize the registry's commit", "commit", snap.Commit, "err", err)
				} else {
					snap = whole
				}
				ok = false
			}
		}
		if ok {
			p.log.Debug("derived registry index from the previous commit's", "commit", snap.Commit, "from", prev.Commit,
				"changed_paths", len(changes.Paths), "entries", len(idx.Entries), "entries_read", parsed)
			p.persist(ctx, c, snap, idx)
			idx.report(p.log)
			p.mu.Lock()
			p.indexes[snap.Dir] = idx
			p.mu.Unlock()
			return
		}
	}
	p.snapshotIndex(ctx, c, snap)
}
