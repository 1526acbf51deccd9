package gitregistry

import (
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gitcache"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// deriveIndex returns the index of commit, materialized at dir, from the
// index of the commit served before it (old) and the paths that differ
// between the two trees, reading only what the change can have touched. It
// reports false when it cannot (the caller then builds the index from the
// tree): the registry root changed whether it is an entry, or the old index
// has a problem of its own. parsed is the number of entries read again.
//
// What an entry is derived from, and so what makes it read again:
//
//   - whether a directory is an entry depends on the SYMPOSIUM.toml and
//     SKILL.md directly in it and on its ancestors (no entry is looked for
//     inside an entry): a change to a path of either name (in any case,
//     for file systems that ignore it) — a file changed, added or removed,
//     or turned into a directory or from one — makes the directory holding
//     it be enumerated again, and a directory added or removed (or turned
//     into a file or from one) is enumerated again itself, unless an entry
//     holds the directory enumerated;
//   - an entry's fields depend on the files below its directory and below
//     the directories its skill groups were read from (entry.Groups): a
//     change below either makes it be read again.
//
// The change list comes from comparing the two commits' trees in the
// repository (gitcache.Changes), which does not hold symbolic links: a tree
// with links is never derived (the cache reports no changes then).
func deriveIndex(old *index, dir, commit string, changes []gitcache.ChangedPath) (idx *index, parsed int, ok bool) {
	if old == nil || old.Problem != "" {
		return nil, 0, false
	}
	// The directories to enumerate again, outermost only. Both rules apply
	// to a path: a SKILL.md or SYMPOSIUM.toml that turned from a directory
	// into a file, or back, changes whether its parent is an entry (and the
	// parent's enumeration covers the path), and a directory's content may
	// hold entries.
	var again []string
	for _, c := range changes {
		if base := path.Base(c.Path); strings.EqualFold(base, manifest.ManifestFile) || strings.EqualFold(base, skill.File) {
			again = append(again, parentDir(c.Path))
		}
		if c.Dir {
			again = append(again, c.Path)
		}
	}
	slices.Sort(again)
	again = slices.Compact(again)
	outer := again[:0]
	for _, d := range again {
		if d == "" {
			return nil, 0, false // the root itself: build from the tree
		}
		if len(outer) > 0 && under(d, outer[len(outer)-1]) {
			continue // sorted: an ancestor comes first
		}
		outer = append(outer, d)
	}
	again = outer

	oldPaths := newPathSet(len(old.Entries))
	for _, e := range old.Entries {
		oldPaths.add(e.Path)
	}
	changed := newPathSet(len(changes))
	for _, c := range changes {
		changed.add(c.Path)
	}

	idx = &index{Format: indexFormat, Commit: commit, Entries: make([]entry, 0, len(old.Entries)+len(changes))}
	// Entries kept from the old index, unless inside a directory enumerated
	// again.
	for _, e := range old.Entries {
		if _, found := slices.BinarySearch(again, e.Path); found || hasAncestorIn(e.Path, again) {
			continue
		}
		if changed.touches(e.Path) || touchesAny(changed, e.Groups) {
			k := layout.EntryPlugin
			if e.Kind == "skill" {
				k = layout.EntrySkill
			}
			e = loadEntry(dir, layout.Entry{Path: e.Path, Kind: k})
			parsed++
		}
		idx.Entries = append(idx.Entries, e)
	}
	// The directories enumerated again: none inside an entry kept (an entry
	// stays one unless its own directory is enumerated again).
	for _, d := range again {
		if oldPaths.hasStrictAncestor(d) {
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(d))
		if kind, isEntry := layout.Classify(p); isEntry {
			idx.Entries = append(idx.Entries, loadEntry(dir, layout.Entry{Path: d, Kind: kind}))
			parsed++
			continue
		}
		ents, err := layout.Enumerate(p)
		if err != nil {
			return nil, 0, false
		}
		for _, e := range ents {
			e.Path = d + "/" + e.Path
			idx.Entries = append(idx.Entries, loadEntry(dir, e))
			parsed++
		}
	}
	slices.SortFunc(idx.Entries, func(a, b entry) int { return comparePaths(a.Path, b.Path) })
	return idx, parsed, true
}

// parentDir is the directory holding p, "" for the root.
func parentDir(p string) string {
	d := path.Dir(p)
	if d == "." {
		return ""
	}
	return d
}

// under reports whether p is below (strictly) the directory d; everything
// is below the root "" or ".".
func under(p, d string) bool {
	if d == "" || d == "." {
		return p != "" && p != "."
	}
	return len(p) > len(d) && p[len(d)] == '/' && p[:len(d)] == d
}

// hasAncestorIn reports whether a strict ancestor of p is in the sorted set.
func hasAncestorIn(p string, sorted []string) bool {
	for d := parentDir(p); d != ""; d = parentDir(d) {
		if _, found := slices.BinarySearch(sorted, d); found {
			return true
		}
	}
	return false
}

// comparePaths orders slash-separated paths component by component, as
// layout.Enumerate sorts entries.
func comparePaths(a, b string) int {
	return slices.Compare(strings.Split(a, "/"), strings.Split(b, "/"))
}

// pathSet is a set of slash-separated paths answering, in logarithmic time,
// whether a path or anything below or above it is in the set.
type pathSet struct {
	sorted []string
	sortOK bool
}

func newPathSet(n int) *pathSet { return &pathSet{sorted: make([]string, 0, n)} }

func (s *pathSet) add(p string) { s.sorted = append(s.sorted, p); s.sortOK = false }

func (s *pathSet) ready() {
	if !s.sortOK {
		sort.Strings(s.sorted)
		s.sortOK = true
	}
}

func (s *pathSet) has(p string) bool {
	s.ready()
	_, found := slices.BinarySearch(s.sorted, p)
	return found
}

// hasBelow reports whether a path strictly below d is in the set.
func (s *pathSet) hasBelow(d string) bool {
	s.ready()
	if d == "" || d == "." {
		return len(s.sorted) > 0
	}
	i, _ := slices.BinarySearch(s.sorted, d+"/")
	return i < len(s.sorted) && strings.HasPrefix(s.sorted[i], d+"/")
}

// hasStrictAncestor reports whether a directory holding p is in the set.
func (s *pathSet) hasStrictAncestor(p string) bool {
	for d := parentDir(p); d != ""; d = parentDir(d) {
		if s.has(d) {
			return true
		}
	}
	return false
}

// touches reports whether the set holds p, a path below it, or a directory
// holding it (a directory added or removed as a whole).
func (s *pathSet) touches(p string) bool {
	return s.has(p) || s.hasBelow(p) || s.hasStrictAncestor(p)
}

// touchesAny reports whether the set touches any of the directories ("."
// is the root, which every path is below).
func touchesAny(s *pathSet, dirs []string) bool {
	for _, d := range dirs {
		if d == "." || d == "" {
			if len(s.sorted) > 0 {
				return true
			}
		} else if s.touches(d) {
			return true
		}
	}
	return false
}
