// Package lockfile holds what the npm lockfile readers have in common: the
// answer to "which exact package did the lockfile install for this
// dependency of this workspace member?".
//
// The readers live in the subpackages packagelock (package-lock.json and
// npm-shrinkwrap.json), yarnlock (yarn.lock, v1 and berry) and pnpmlock
// (pnpm-lock.yaml).
package lockfile

import (
	"path"
	"strings"
)

// Resolution is what a lockfile recorded for one direct dependency.
type Resolution struct {
	// Name is the registry name of the package installed: the real package
	// of an alias, else the declared name.
	Name string
	// Version is the version installed; it may be a non-semver string for git
	// or file dependencies when the lockfile records no package version.
	Version string
	// Link is the target directory, slash-separated and relative to the
	// lockfile's directory, when the dependency is a link to a local directory
	// (a workspace member, a "file:" or "link:" directory); else "".
	Link string
}

// Resolver answers for one parsed lockfile.
type Resolver interface {
	// Resolve reports what the lockfile installed for the dependency name,
	// declared with spec in the workspace member at importer (a
	// slash-separated path relative to the lockfile's directory, "" for the
	// root). It reports false when the lockfile does not know.
	Resolve(importer, name, spec string) (Resolution, bool)
}

// CleanImporter normalizes an importer path: "", "." and "./" mean the
// root; otherwise the path is cleaned lexically ("./a//b/" is "a/b") and
// loses its leading and trailing slashes. Cleaning a cleaned path changes
// nothing.
func CleanImporter(importer string) string {
	importer = path.Clean(strings.Trim(importer, "/"))
	if importer == "." {
		return ""
	}
	return importer
}

// JoinRel joins slash-separated relative paths, resolving "." and ".."
// lexically; a path that climbs above the base keeps its leading "..".
func JoinRel(base, rel string) string {
	parts := []string{}
	for _, p := range strings.Split(base+"/"+rel, "/") {
		switch p {
		case "", ".":
		case "..":
			if len(parts) > 0 && parts[len(parts)-1] != ".." {
				parts = parts[:len(parts)-1]
			} else {
				parts = append(parts, "..")
			}
		default:
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}
