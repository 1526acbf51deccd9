package npmpm

import (
	"path/filepath"
	"strings"
)

// What a cached active_plugins answer trusts.
//
// A package an installer unpacked into node_modules is written once per
// name and version and never rewritten in place: a new version is a new
// directory, and the cache key already holds every version asked for. So
// the answer is not stamped on each installed package's files; it is
// stamped on the installer's own record of the install state, a file in
// node_modules that the installer rewrites whenever it adds, removes or
// replaces a package:
//
//   - npm 7 and later: node_modules/.package-lock.json (the hidden
//     lockfile, which also covers the members' node_modules of a
//     workspace);
//   - pnpm: node_modules/.modules.yaml;
//   - yarn 1: node_modules/.yarn-integrity;
//   - yarn 2 and later with the node-modules linker:
//     node_modules/.yarn-state.yml.
//
// Beside the record, the node_modules listing (and each scope directory
// listed) stays stamped, and so does the directory of every package
// offered, which depcache checks on every load. What a user edits in
// ordinary work is stamped file by file as before: a node_modules entry
// that is a symbolic link leading out of the installer's node_modules (a
// workspace member, npm link, a file: or link: directory, and pnpm's copy
// of a file: directory, whose files are hard links to the user's), and every
// package of a node_modules that holds no record (a tree made by hand, or
// by an installer that keeps none). A hand edit inside installed content is
// therefore seen after the installer next runs, or once the PM's cache
// directory is deleted.

// isInstallerRecord reports whether name, an entry of a node_modules
// directory, is a file an installer keeps its record of the install in.
func isInstallerRecord(name string) bool {
	switch name {
	case ".package-lock.json", ".modules.yaml", ".yarn-integrity", ".yarn-state.yml":
		return true
	}
	return false
}

// coverOf returns the real path of the node_modules whose installer record
// covers the packages installed in parent i's node_modules: its own, else,
// for a workspace member, the workspace's (npm, pnpm and yarn keep one
// record for a whole workspace). ok is false when no record covers it.
func (idx *installIndex) coverOf(i int) (string, bool) {
	switch {
	case idx.recorded[i]:
		return idx.realNodeModules(i), true
	case idx.member[i] && idx.workspace >= 0 && idx.recorded[idx.workspace]:
		return idx.realNodeModules(idx.workspace), true
	}
	return "", false
}

// realNodeModules returns parent i's node_modules with symbolic links
// resolved, resolving it once.
func (idx *installIndex) realNodeModules(i int) string {
	if r, ok := idx.realNM[i]; ok {
		return r
	}
	nm := filepath.Join(idx.parents[i], "node_modules")
	r := nm
	if real, err := filepath.EvalSymlinks(nm); err == nil {
		r = real
	}
	idx.realNM[i] = r
	return r
}

// installerOwned reports whether the copy found at at, whose real
// directory is real, is content its installer owns (see above): a record
// covers its node_modules, and it is a plain entry or a link that stays
// inside the covering node_modules (pnpm's node_modules/.pnpm), except
// pnpm's copy of a file: directory.
func (idx *installIndex) installerOwned(at installed, real string) bool {
	cover, ok := idx.coverOf(at.parent)
	if !ok {
		return false
	}
	if !at.link {
		return true
	}
	rel, ok := strings.CutPrefix(real, cover+string(filepath.Separator))
	return ok && !pnpmFileDep(rel)
}

// pnpmFileDep reports whether rel, a path inside a node_modules, lies in
// pnpm's copy of a file: directory dependency
// (.pnpm/<name>@file+<path>/...). pnpm hard-links that copy's files to the
// user's directory, so an edit there in place is an edit of the copy: it is
// the user's content, and stays stamped.
func pnpmFileDep(rel string) bool {
	first, rest, _ := strings.Cut(filepath.ToSlash(rel), "/")
	entry, _, _ := strings.Cut(rest, "/")
	return first == ".pnpm" && strings.Contains(entry, "@file+")
}
