package packagejson

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Expansion is the result of expanding workspace patterns.
type Expansion struct {
	// Dirs are the member directories, relative to the root and
	// slash-separated, that hold a package.json; sorted and without duplicates.
	Dirs []string
	// Listed are the absolute directories whose entries were read; a change to
	// any of them (a member added or removed) changes their modification time.
	Listed []string
	// Matched are the relative directories the patterns matched, members or
	// not: whether each holds a package.json decides membership.
	Matched []string
}

// ExpandWorkspaces expands the workspace patterns of the package.json in
// root the way npm's map-workspaces does: each pattern is a slash-separated
// glob relative to root ("*", "?", "[...]" within a segment, "**" across
// segments), a leading "!" excludes, and a match is a member when it holds a
// package.json. node_modules directories are never entered.
func ExpandWorkspaces(root string, patterns []string) Expansion {
	var ex Expansion
	listed := map[string]bool{}
	include := map[string]bool{}
	matched := map[string]bool{}
	for _, p := range patterns {
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimPrefix(p, "!")
		p = strings.TrimSuffix(path.Clean(strings.TrimPrefix(filepath.ToSlash(p), "./")), "/")
		if p == "" || p == "." || strings.HasPrefix(p, "../") || p == ".." || path.IsAbs(p) {
			continue
		}
		var matches []string
		glob(root, "", strings.Split(p, "/"), listed, &matches)
		for _, m := range matches {
			matched[m] = true
			if neg {
				delete(include, m)
			} else if isFile(filepath.Join(root, filepath.FromSlash(m), "package.json")) {
				include[m] = true
			}
		}
	}
	for d := range include {
		ex.Dirs = append(ex.Dirs, d)
	}
	slices.Sort(ex.Dirs)
	for d := range matched {
		ex.Matched = append(ex.Matched, d)
	}
	slices.Sort(ex.Matched)
	for d := range listed {
		ex.Listed = append(ex.Listed, d)
	}
	slices.Sort(ex.Listed)
	return ex
}

// glob appends to out the relative directories under root/rel matching segs.
func glob(root, rel string, segs []string, listed map[string]bool, out *[]string) {
	if len(segs) == 0 {
		*out = append(*out, rel)
		return
	}
	seg := segs[0]
	if seg == "**" {
		glob(root, rel, segs[1:], listed, out) // zero segments
		for _, name := range subdirs(root, rel, listed) {
			glob(root, path.Join(rel, name), segs, listed, out)
		}
		return
	}
	if !strings.ContainsAny(seg, "*?[\\") {
		next := path.Join(rel, seg)
		if seg != "node_modules" && isDir(filepath.Join(root, filepath.FromSlash(next))) {
			glob(root, next, segs[1:], listed, out)
		}
		return
	}
	for _, name := range subdirs(root, rel, listed) {
		if ok, err := path.Match(seg, name); err == nil && ok {
			glob(root, path.Join(rel, name), segs[1:], listed, out)
		}
	}
}

// subdirs lists the directories in root/rel, skipping node_modules and
// hidden directories, and records the listing.
func subdirs(root, rel string, listed map[string]bool) []string {
	dir := filepath.Join(root, filepath.FromSlash(rel))
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	listed[dir] = true
	var names []string
	for _, e := range ents {
		n := e.Name()
		if n == "node_modules" || strings.HasPrefix(n, ".") {
			continue
		}
		if e.IsDir() || (e.Type()&os.ModeSymlink != 0 && isDir(filepath.Join(dir, n))) {
			names = append(names, n)
		}
	}
	return names
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
