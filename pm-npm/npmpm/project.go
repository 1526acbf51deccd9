package npmpm

import (
	"path/filepath"
	"slices"

	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// project is the npm project a directory belongs to, found the way npm
// finds it from its working directory.
type project struct {
	// root is the directory whose package.json, lockfiles and node_modules
	// are read: the workspace root when the directory is inside a member.
	root string
	// scoped is true when the directory is inside a workspace member, whose
	// own dependencies alone are then asked for (npm sets its "workspace"
	// option to that member); member is its directory relative to root,
	// slash-separated.
	scoped bool
	member string
}

// findProject finds the project of dir as npm's configuration loader does.
// The local prefix is the nearest directory at or above dir holding a
// package.json or a node_modules directory (dir itself when there is
// none). When an ancestor of the prefix is a workspace root whose
// workspaces (package.json "workspaces", or pnpm-workspace.yaml for pnpm)
// include the prefix, that ancestor is the root and the prefix the member
// asked about; the nearest such ancestor wins, and ancestors whose
// workspaces do not include the prefix are passed over, as npm does. Every
// file and directory consulted is recorded in rec.
func findProject(rec *depcache.Recorder, dir string) project {
	prefix := ""
	for d := dir; ; {
		if fi, err := rec.Stat(filepath.Join(d, "package.json")); err == nil && !fi.IsDir() {
			prefix = d
			break
		}
		if fi, err := rec.Stat(filepath.Join(d, "node_modules")); err == nil && fi.IsDir() {
			prefix = d
			break
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if prefix == "" {
		return project{root: dir}
	}
	for a := filepath.Dir(prefix); ; {
		if rel, ok := workspaceMember(rec, a, prefix); ok {
			return project{root: a, scoped: true, member: rel}
		}
		parent := filepath.Dir(a)
		if parent == a {
			break
		}
		a = parent
	}
	return project{root: prefix}
}

// workspaceMember reports whether dir is a workspace member of the
// workspace root candidate root, and dir's slash-separated path relative to
// root. A root's package.json that cannot be read or parsed declares no
// workspaces (npm passes over it the same way).
func workspaceMember(rec *depcache.Recorder, root, dir string) (string, bool) {
	var patterns []string
	if data, err := rec.ReadFile(filepath.Join(root, "package.json"), pkgfile.MaxManifest); err == nil {
		if m, err := packagejson.Parse(data); err == nil {
			patterns = m.Workspaces
		}
	}
	if pw, err := rec.ReadFile(filepath.Join(root, "pnpm-workspace.yaml"), pkgfile.MaxManifest); err == nil {
		patterns = append(patterns, pnpmWorkspacePatterns(pw)...)
	}
	if len(patterns) == 0 {
		return "", false
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil || !filepath.IsLocal(rel) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	ex := packagejson.ExpandWorkspaces(root, patterns)
	recordExpansion(rec, root, ex)
	_, found := slices.BinarySearch(ex.Dirs, rel)
	return rel, found
}

// recordExpansion records what a workspace expansion under root depends
// on: the directories it listed, and whether each directory it matched
// holds a package.json.
func recordExpansion(rec *depcache.Recorder, root string, ex packagejson.Expansion) {
	for _, d := range ex.Listed {
		rec.Stat(d)
	}
	for _, d := range ex.Matched {
		// A package.json appearing in (or leaving) a matched directory
		// changes membership without touching any listed directory.
		rec.Stat(filepath.Join(root, filepath.FromSlash(d), "package.json"))
	}
}

// projectWorkspaces returns the workspace patterns of a project root: its
// package.json "workspaces" and the packages of its pnpm-workspace.yaml.
func projectWorkspaces(rec *depcache.Recorder, root string, pkg *packagejson.Manifest) []string {
	var patterns []string
	if pkg != nil {
		patterns = append(patterns, pkg.Workspaces...)
	}
	if pw, err := rec.ReadFile(filepath.Join(root, "pnpm-workspace.yaml"), pkgfile.MaxManifest); err == nil {
		patterns = append(patterns, pnpmWorkspacePatterns(pw)...)
	}
	return patterns
}
