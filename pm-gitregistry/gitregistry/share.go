package gitregistry

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// A refresh that cannot update the previous commit's directory in place
// (roots of it may be in use) lets the new commit's directory share the
// entries that did not change with the directories that hold them
// (gitcache.Share): the new directory holds the changed entries and what
// lies outside entries, and an unchanged entry's root stays where it was
// handed out before. An entry is shared only when what it is read from
// lies inside its own directory (its skill groups), and no other entry
// reads from inside it, so that reading the new commit's changed entries
// never needs a directory that the new commit does not hold.

// shareFrom returns what a refresh from the commit directory of pr may
// share: every such entry of pr's index, with the name of the commit
// directory that holds it. The refresh asks with the name of the directory
// it updates from, which is pr's unless a repair replaced it meanwhile (it
// then shares nothing).
func (p *PM) shareFrom(c *gitcache.Cache, pr previous) func(prev string) gitcache.Share {
	return func(prev string) gitcache.Share {
		if prev != pr.name || pr.name == "" {
			return nil
		}
		old := pr.index()
		if old == nil || old.Problem != "" {
			return nil
		}
		held, err := c.Shared(prev)
		if err != nil {
			return nil
		}
		paths := newPathSet(len(old.Entries))
		for _, e := range old.Entries {
			paths.add(e.Path)
		}
		// Entries read from outside themselves, and entries another one
		// reads from, are not shared.
		not := map[string]bool{}
		for _, e := range old.Entries {
			for _, g := range e.Groups {
				if g == e.Path || under(g, e.Path) {
					continue
				}
				not[e.Path] = true
				for q := g; q != "." && q != "" && q != "/"; q = path.Dir(q) {
					if paths.has(q) {
						not[q] = true
					}
				}
			}
		}
		share := make(gitcache.Share, len(old.Entries))
		for _, e := range old.Entries {
			if e.Path == "" || e.Path == "." || not[e.Path] {
				continue
			}
			home := prev
			if h, ok := held[e.Path]; ok {
				home = h
			}
			share[e.Path] = home
		}
		return share
	}
}

// withHomes sets the directory holding each entry of idx, a commit whose
// directory shares with others (share). It reports false when idx does
// not fit share: a shared directory that is not an entry (a change made an
// ancestor an entry, or hid it from the change's enumeration), or an entry
// reading skills from inside another's shared directory. The commit's
// directory must then be materialized whole.
func withHomes(idx *index, share gitcache.Share) bool {
	found := 0
	for i := range idx.Entries {
		e := &idx.Entries[i]
		e.Home = share[e.Path]
		if e.Home != "" {
			found++
		}
		for _, g := range e.Groups {
			if h, ok := share.Holder(g); ok && (g != e.Path && !under(g, e.Path) || e.Home != h) {
				return false
			}
		}
	}
	return found == len(share)
}

// buildSharedIndex is buildIndex for a commit whose directory dir shares
// with others: the entries it holds, enumerated there, and the entries it
// shares, each read in the directory holding it.
func buildSharedIndex(dir, commit string, share gitcache.Share) *index {
	idx := buildIndex(dir, commit)
	if idx.Problem != "" {
		return idx
	}
	for p, home := range share {
		root := filepath.Join(filepath.Dir(dir), home)
		kind, ok := layout.Classify(filepath.Join(root, filepath.FromSlash(p)))
		if !ok {
			idx.Entries = append(idx.Entries, entry{Path: p, Home: home, Problem: fmt.Sprintf("shared entry directory %s of commit %s holds no %s or %s", p, short(home), manifest.ManifestFile, skill.File)})
			continue
		}
		e := loadEntry(root, layout.Entry{Path: p, Kind: kind})
		e.Home = home
		idx.Entries = append(idx.Entries, e)
	}
	slices.SortFunc(idx.Entries, func(a, b entry) int { return comparePaths(a.Path, b.Path) })
	return idx
}

// loc is where entry e of a commit lies, slash-separated and relative to
// the commit's directory: its path, or for an entry held by another
// commit's directory, its path there reached from the commit's.
func (e entry) loc() string {
	if e.Home == "" {
		return e.Path
	}
	return "../" + e.Home + "/" + e.Path
}

// rootOf is the directory of entry e of the commit materialized at dir.
func rootOf(dir string, e entry) string {
	if e.Home == "" {
		return dir + string(filepath.Separator) + filepath.FromSlash(e.Path) // both clean
	}
	return filepath.Join(filepath.Dir(dir), e.Home, filepath.FromSlash(e.Path))
}

// unshare replaces a commit's directory that shares with others by a copy
// holding its whole tree, when its index cannot be had otherwise, and
// returns that copy (gitcache.Cache.Repair: the directory replaced stays
// for the roots handed out of it until collected).
func (p *PM) unshare(ctx context.Context, c *gitcache.Cache, snap gitcache.Snapshot) (gitcache.Snapshot, error) {
	p.log.Debug("materializing a commit that shares its entries in full", "commit", snap.Commit)
	return c.Repair(ctx, snap)
}
