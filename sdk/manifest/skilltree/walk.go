package skilltree

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
)

// Limits bound the walk of one plugin's skill groups. A walk that
// reaches a bound stops there, and discovery says so in a warning: the
// skills past the bound are not counted.
type Limits struct {
	// Depth is how many directory levels below a skill group's directory
	// are entered.
	Depth int
	// Entries is how many directory entries are read, over all the skill
	// groups of one plugin.
	Entries int
	// Time is how long the walk of one plugin may take.
	Time time.Duration

	// first ends the walk at the first skill found.
	first bool
}

// The default walk bounds: far above any real skill tree (a handful of
// levels, tens of files), low enough that a root pointing at a whole file
// system costs well under a second.
const (
	DefaultDepth   = 16
	DefaultEntries = 10_000
	DefaultTime    = time.Second
)

// withDefaults fills zero fields with the defaults.
func (l Limits) withDefaults() Limits {
	if l.Depth <= 0 {
		l.Depth = DefaultDepth
	}
	if l.Entries <= 0 {
		l.Entries = DefaultEntries
	}
	if l.Time <= 0 {
		l.Time = DefaultTime
	}
	return l
}

// WalkResult is what the walk of one plugin's skill groups found.
type WalkResult struct {
	// Skills are the SKILL.md files counted, relative to the plugin root,
	// in walk order without duplicates.
	Skills []string
	// Problems name the entries left out for leading outside the plugin
	// root or not being what their name says (the first MaxProblems),
	// and NProblems counts them all.
	Problems  []string
	NProblems int
	// Bound, when not empty, says which bound stopped the walk.
	Bound string
	// Deep, when not empty, names the first directory left out for lying
	// below the depth bound (the walk goes on beside it).
	Deep string
}

// skillWalker walks skill groups inside a plugin root opened as an os.Root,
// so that no symbolic link can reach anything outside it.
type skillWalker struct {
	ctx      context.Context
	root     *os.Root
	lim      Limits
	deadline time.Time
	entries  int
	seen     map[string]bool
	res      WalkResult
}

// Walk lists the SKILL.md files of the skill groups groups (paths
// relative to root) as Symposium scans them: every regular
// file named SKILL.md at any depth, skipping directories holding a
// .symposium marker, and not counting a SKILL.md below the directory of
// another one. Everything is read through root: a symbolic link leading out
// of it is reported, never followed.
func Walk(ctx context.Context, root *os.Root, groups []string, lim Limits) WalkResult {
	lim = lim.withDefaults()
	w := &skillWalker{ctx: ctx, root: root, lim: lim, deadline: time.Now().Add(lim.Time), seen: map[string]bool{}}
	for _, g := range groups {
		if w.res.Bound != "" {
			break
		}
		fi, err := root.Stat(g)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue // an absent group holds no skills
		case err != nil:
			w.problem(g, err)
			continue
		case !fi.IsDir():
			continue
		}
		w.dir(g, 0, false, []os.FileInfo{fi})
	}
	return w.res
}

// problem records an entry left out because of err.
func (w *skillWalker) problem(rel string, err error) {
	if LeadsOutside(err) {
		w.note(fmt.Sprintf("%s leads outside the plugin root; left out", rel))
		return
	}
	w.note(fmt.Sprintf("%s cannot be followed inside the plugin root (%v); left out", rel, pathCause(err)))
}

// note records a problem; past MaxProblems only their number is kept.
func (w *skillWalker) note(msg string) {
	w.res.NProblems++
	if len(w.res.Problems) < MaxProblems {
		w.res.Problems = append(w.res.Problems, msg)
	}
}

// MaxProblems is how many of a walk's left-out entries are named in
// WalkResult.Problems; the rest are only counted.
const MaxProblems = 5

// LeadsOutside reports whether err is os.Root refusing a path that resolves
// outside the root. The os package exports no value for it, so its message
// is matched; an unmatched one is still reported, with the cause.
func LeadsOutside(err error) bool {
	return err != nil && strings.Contains(pathCause(err).Error(), "path escapes from parent")
}

// stop reports whether a bound or the context ends the walk, recording why.
func (w *skillWalker) stop() bool {
	if w.res.Bound != "" {
		return true
	}
	switch {
	case w.lim.first && len(w.res.Skills) > 0:
		w.res.Bound = "the first skill"
	case w.ctx.Err() != nil:
		w.res.Bound = "discovery was cancelled"
	case w.entries >= w.lim.Entries:
		w.res.Bound = fmt.Sprintf("the bound of %d directory entries", w.lim.Entries)
	case time.Now().After(w.deadline):
		w.res.Bound = fmt.Sprintf("the time bound of %v", w.lim.Time)
	}
	return w.res.Bound != ""
}

// readDir reads the entries of rel, up to what is left of the entry bound.
func (w *skillWalker) readDir(rel string) ([]fs.DirEntry, error) {
	f, err := w.root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []fs.DirEntry
	for !w.stop() {
		des, err := f.ReadDir(min(256, w.lim.Entries-w.entries))
		w.entries += len(des)
		out = append(out, des...)
		if errors.Is(err, io.EOF) || err == nil && len(des) == 0 {
			break
		}
		if err != nil {
			return out, err
		}
	}
	// In name order, so that what a walk finds and reports is the same on
	// every run.
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// dir walks the directory rel, depth levels below its group; inSkill says
// that an ancestor within the group holds a SKILL.md already; ancestors are
// the directories on the way, to end symbolic link cycles.
func (w *skillWalker) dir(rel string, depth int, inSkill bool, ancestors []os.FileInfo) {
	if w.stop() {
		return
	}
	des, err := w.readDir(rel)
	if err != nil {
		w.problem(rel, err)
		return
	}
	// The marker and the SKILL.md of a directory decide for its subtree, so
	// look at them before descending.
	var subdirs []string
	var subinfo []os.FileInfo
	holds := inSkill
	for _, de := range des {
		if de.Name() == MarkerFile && de.Type().IsRegular() {
			return // an installed copy: skipped with all it holds
		}
	}
	for _, de := range des {
		p := path.Join(rel, de.Name())
		typ := de.Type()
		var fi os.FileInfo
		if typ&fs.ModeSymlink != 0 {
			// Resolved inside the root: a link leading out of it fails here.
			if fi, err = w.root.Stat(p); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					w.problem(p, err)
				}
				continue
			}
			typ = fi.Mode().Type()
		}
		switch {
		case de.Name() == File:
			if !typ.IsRegular() {
				w.note(fmt.Sprintf("%s is not a regular file; left out", p))
				continue
			}
			holds = true
			if !inSkill && !w.seen[p] {
				w.seen[p] = true
				w.res.Skills = append(w.res.Skills, p)
			}
		case typ.IsDir():
			if fi == nil {
				if fi, err = de.Info(); err != nil {
					continue
				}
			}
			subdirs = append(subdirs, p)
			subinfo = append(subinfo, fi)
		}
	}
	for i, sub := range subdirs {
		if w.stop() {
			return
		}
		if depth+1 > w.lim.Depth {
			if w.res.Deep == "" {
				w.res.Deep = sub
			}
			continue
		}
		// A directory already on the way is a symbolic link cycle; lstat
		// information of a plain directory cannot match an ancestor.
		if slices.ContainsFunc(ancestors, func(a os.FileInfo) bool { return os.SameFile(a, subinfo[i]) }) {
			continue
		}
		w.dir(sub, depth+1, holds, append(ancestors, subinfo[i]))
	}
}

// pathCause strips the operation and path from an os error, for messages
// that name the path themselves.
func pathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// File is the exact file name of a skill.
const File = "SKILL.md"

// MarkerFile marks an installed copy of a skill; directories holding it are
// skipped when scanning skill groups.
const MarkerFile = ".symposium"

// Scan lists the SKILL.md files of a skill group directory (reference
// §6.5): every regular file named SKILL.md at any depth, skipping
// directories that hold a .symposium marker, then dropping any whose
// directory lies inside the directory of a shallower one. A missing
// directory yields none. Paths are absolute when dir is. The walk is
// [Walk] with the default bounds, inside dir opened as an os.Root: a
// symbolic link leading out of dir is not followed.
func Scan(dir string) []string {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil
	}
	defer root.Close()
	res := Walk(context.Background(), root, []string{"."}, Limits{})
	out := make([]string, len(res.Skills))
	for i, f := range res.Skills {
		out[i] = filepath.Join(dir, f)
	}
	// Shallowest first, then by name, as Symposium lists them.
	depth := func(p string) int { return strings.Count(filepath.ToSlash(p), "/") }
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(depth(a)-depth(b), strings.Compare(a, b)) })
	return out
}

// Embeds reports whether root/skills holds a regular file named SKILL.md
// at any depth: the "does this package embed skills" test of docs/manifests.md
// §11. The walk is [Walk] with the default bounds inside root opened as an
// os.Root, so symbolic links are followed only while they stay inside root.
func Embeds(root string) bool {
	r, err := os.OpenRoot(root)
	if err != nil {
		return false
	}
	defer r.Close()
	return len(Walk(context.Background(), r, []string{manifest.DefaultSkillsPath}, Limits{first: true}).Skills) > 0
}
