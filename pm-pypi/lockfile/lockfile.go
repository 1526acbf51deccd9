// Package lockfile holds what the Python lockfile readers have in common:
// the answer to "which version did this lockfile lock for a dependency?".
//
// One subpackage reads each format, and its parsed lock is a Resolver:
// uvlock (uv.lock), poetrylock (poetry.lock), pylock (PEP 751 pylock.toml
// and pylock.<name>.toml) and pipfilelock (pipenv's Pipfile.lock). pipfile
// reads the Pipfile that Pipfile.lock locks: the declarations of pipenv's
// pair of files.
//
// A reader only reports what its file says. Choosing among several locked
// versions needs the marker environment of the project's interpreter, which
// is the caller's to find: a reader returns every candidate with the
// markers selecting it.
package lockfile

// Locked is one version a lockfile locked for a package.
type Locked struct {
	// Version is the version as the lockfile writes it; "" when it records
	// none (a virtual package, a source tree without a version).
	Version string
	// Markers are PEP 508 environment markers, any of which holding selects
	// this version; none means every environment.
	Markers []string
}

// Resolver answers for one parsed lockfile.
type Resolver interface {
	// Resolve returns the versions the lockfile locked for the package
	// name (PEP 503 normalized), in the lockfile's order, each with the
	// markers selecting it; nil when it locks none. A package locked at one
	// version is returned without markers: the lock installs it wherever the
	// package is required, and whether it is required at all is the
	// declarations' business.
	Resolve(name string) []Locked
}

// WorkspaceReader is implemented by the parsed lockfiles that also describe
// the workspace they lock (uv.lock).
type WorkspaceReader interface {
	// Workspace returns what the lockfile says about the workspace.
	Workspace() Workspace
}

// Workspace is what a lockfile says about the workspace it locks.
type Workspace struct {
	// Members are the normalized names of the workspace's own projects:
	// they are not dependencies.
	Members []string
	// Sources are the local source trees of locked packages, in the
	// lockfile's order.
	Sources []Source
}

// Source is the local source tree of a locked package.
type Source struct {
	// Name is the package's normalized name.
	Name string
	// Path is the tree as the lockfile writes it: slash-separated, relative
	// to the lockfile's directory unless absolute, or a file: URL.
	Path string
}
