package gitregistry

import (
	"context"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
)

// A refresh that moves the registry to another commit leaves that commit's
// index persisted, so that no hook pays for reading the tree: derived from
// the previous commit's index and the paths the update changed (reading
// only the entries the change can have touched, derive.go) when the
// previous index is intact and its commit's directory was whole, or else
// built from the tree.

// previousIndex is the persisted index of the commit served before an
// update, read while that commit's directory is still there: nil unless it
// is intact (checksum, format, commit) and the stamps of the directory
// hold.
func (p *PM) previousIndex(c *gitcache.Cache) *index {
	before, ok := c.Served()
	if !ok {
		return nil
	}
	p.mu.Lock()
	idx := p.indexes[before.Commit]
	p.mu.Unlock()
	data, err := readIndexFile(c.SidecarPath(before.Commit, indexSuffix))
	if err != nil {
		return nil
	}
	if idx == nil {
		if idx, _, err = decodeIndex(data, before.Commit); err != nil {
			return nil
		}
	}
	_, stamps, err := decodeHead(data, before.Commit)
	if err != nil || !stampsHold(before.Dir, stamps) {
		return nil
	}
	return idx
}

// indexUpdate persists the index of the commit an update moved to:
// derived from prev, the previous commit's index, when the update's
// changes are known and start from prev's commit; built from the tree
// otherwise.
func (p *PM) indexUpdate(ctx context.Context, c *gitcache.Cache, snap gitcache.Snapshot, prev *index, changes *gitcache.Changes) {
	if prev != nil && changes != nil && changes.From == prev.Commit {
		if idx, parsed, ok := deriveIndex(prev, snap.Dir, snap.Commit, changes.Paths); ok {
			p.log.Debug("derived registry index from the previous commit's", "commit", snap.Commit, "from", prev.Commit,
				"changed_paths", len(changes.Paths), "entries", len(idx.Entries), "entries_read", parsed)
			p.persist(ctx, c, snap, idx)
			idx.report(p.log)
			p.mu.Lock()
			p.indexes[snap.Commit] = idx
			p.mu.Unlock()
			return
		}
	}
	p.snapshotIndex(ctx, c, snap)
}
