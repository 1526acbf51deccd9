package cargotoml

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Observed says what kind of filesystem input Load consulted.
type Observed int

// The kinds of observed inputs.
const (
	// ObservedFile is a file that was read.
	ObservedFile Observed = iota
	// ObservedDir is a directory whose entries were listed (glob expansion).
	ObservedDir
	// ObservedProbe is a path whose existence was checked and that may be
	// absent.
	ObservedProbe
)

// Options tunes Load.
type Options struct {
	// Observe, when set, is called before each file read, directory listing
	// and existence probe, so a caller can key a cache on those inputs.
	Observe func(path string, kind Observed)
}

// Workspace is a discovered cargo workspace.
type Workspace struct {
	// Root is the absolute directory of the root manifest.
	Root string
	// RootManifest is the root Cargo.toml.
	RootManifest *Manifest
	// Members are the workspace members, sorted by directory. A package
	// outside any workspace is a workspace of one member.
	Members []*Member
	// Errors are the members that failed to load; the others are still
	// listed.
	Errors []error
	// Lockfile is the path where the workspace's Cargo.lock lives (which
	// may not exist).
	Lockfile string
	// PathPackages are the packages of the members' path dependencies that
	// are not members, by directory, as their Cargo.toml says now: cargo
	// reads a path dependency's manifest every time, whatever Cargo.lock
	// recorded. A path dependency whose manifest cannot be read, or whose
	// inherited version cannot be resolved, is absent, and in PathErrors.
	PathPackages map[string]PathPackage
	// Redirects are the path crates the root manifest's [patch] and
	// [replace] entries lead to, with the package each Cargo.toml declares
	// now, in the order of RootManifest.Redirects. An entry whose crate
	// cargo cannot load is absent, and in PathErrors.
	Redirects []RedirectedPackage
	// PathErrors are the path crates outside the members that cargo would
	// fail to load, each a *PathError: a path dependency, or a crate a
	// [patch] or [replace] entry leads to, whose Cargo.toml is missing,
	// unreadable or malformed, has no [package], declares another name (or,
	// for [replace], another version) than asked for, or inherits a
	// version its workspace does not give. cargo refuses to build the
	// workspace until they are fixed; the rest is still listed.
	PathErrors []error
}

// RedirectedPackage is a path crate a [patch] or [replace] entry leads to.
type RedirectedPackage struct {
	Redirect
	// Dir is the crate's absolute directory.
	Dir string
	// Package is what its Cargo.toml declares now.
	Package PathPackage
}

// PathError is a path crate outside the workspace's members that cargo
// cannot load, and what leads to it.
type PathError struct {
	// Manifest is the crate's Cargo.toml.
	Manifest string
	// From says what leads there: `the path dependency "out" of app`, or
	// a [patch] or [replace] entry (Redirect.Table).
	From string
	// Err is the cause; it names the file.
	Err error
}

// Error names what leads to the crate, its directory and the cause.
func (e *PathError) Error() string {
	return fmt.Sprintf("%s leads to %s, which cargo cannot load: %v", e.From, filepath.Dir(e.Manifest), e.Err)
}

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// PathPackage is the package a path dependency's manifest declares.
type PathPackage struct {
	// Name and Version are the package's (Version resolved through its
	// workspace's [workspace.package]; "0.0.0" when absent).
	Name, Version string
}

// Member is one workspace member.
type Member struct {
	// Dir is the member's absolute directory.
	Dir      string
	Manifest *Manifest
	// Name and Version are the package's (Version resolved through
	// workspace inheritance; "0.0.0" when absent, as cargo does).
	Name, Version string
	// Deps are the member's dependencies with `workspace = true` entries
	// resolved against [workspace.dependencies] and Path made absolute.
	Deps []Dependency
}

// ErrNoManifest is returned by Load when no Cargo.toml exists at or above
// the start directory.
var ErrNoManifest = errors.New("no Cargo.toml found")

type loader struct {
	opts   Options
	cache  map[string]*Manifest
	errors map[string]error
	// files memoizes exists: walking up from each member to its root
	// probes the same ancestors again.
	files map[string]bool
}

func (l *loader) observe(path string, k Observed) {
	if l.opts.Observe != nil {
		l.opts.Observe(path, k)
	}
}

func (l *loader) manifest(path string) (*Manifest, error) {
	if m, ok := l.cache[path]; ok {
		return m, nil
	}
	if err, ok := l.errors[path]; ok {
		return nil, err
	}
	l.observe(path, ObservedFile)
	m, err := ReadFile(path)
	if err != nil {
		l.errors[path] = err
		return nil, err
	}
	l.cache[path] = m
	return m, nil
}

func (l *loader) exists(path string) bool {
	if ok, seen := l.files[path]; seen {
		return ok
	}
	l.observe(path, ObservedProbe)
	fi, err := os.Stat(path)
	ok := err == nil && fi.Mode().IsRegular()
	l.files[path] = ok
	return ok
}

// Load discovers the workspace that the directory start belongs to, as cargo
// does: the nearest Cargo.toml at or above start, and the workspace root
// that claims it (the manifest itself, its `package.workspace`, or the
// nearest ancestor with a [workspace] table that does not exclude it).
func Load(start string, opts Options) (*Workspace, error) {
	start, err := filepath.Abs(start)
	if err != nil {
		return nil, err
	}
	l := &loader{opts: opts, cache: map[string]*Manifest{}, errors: map[string]error{}, files: map[string]bool{}}
	var current string
	for dir := start; ; {
		p := filepath.Join(dir, "Cargo.toml")
		if l.exists(p) {
			current = p
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil, fmt.Errorf("%s: %w", start, ErrNoManifest)
		}
		dir = parent
	}
	cm, err := l.manifest(current)
	if err != nil {
		return nil, err
	}
	rootPath, err := l.rootOf(current, cm)
	if err != nil {
		return nil, err
	}
	rm := cm
	if rootPath != current {
		if rm, err = l.manifest(rootPath); err != nil {
			return nil, err
		}
	}
	ws := &Workspace{Root: filepath.Dir(rootPath), RootManifest: rm, Lockfile: filepath.Join(filepath.Dir(rootPath), "Cargo.lock")}
	if rm.Workspace == nil {
		// A lone package.
		mem, err := l.member(ws, filepath.Dir(rootPath), rm)
		if err != nil {
			return nil, err
		}
		ws.Members = []*Member{mem}
		l.pathPackages(ws)
		l.redirects(ws)
		return ws, nil
	}
	if err := l.members(ws); err != nil {
		return nil, err
	}
	l.pathPackages(ws)
	l.redirects(ws)
	if rootPath != current && cm.Package != nil && !ws.hasMember(filepath.Dir(current)) {
		// Cargo refuses to build a package that a workspace claims without
		// listing it; answering for the enclosing workspace would describe
		// a project cargo does not accept.
		return nil, fmt.Errorf("%s: the package believes it is in the workspace at %s, which does not list it as a member; "+
			"add %q to workspace.members in %s, or add it to workspace.exclude there, or give the package an empty [workspace] table",
			current, rootPath, filepath.ToSlash(rel(ws.Root, filepath.Dir(current))), rootPath)
	}
	return ws, nil
}

func (ws *Workspace) hasMember(dir string) bool {
	for _, m := range ws.Members {
		if m.Dir == dir {
			return true
		}
	}
	return false
}

// rootOf returns the manifest of the workspace root that claims the
// manifest at path (whose parsed form is m), as cargo finds it: the manifest
// itself when it has a [workspace] table, the root its package.workspace
// names, or else the nearest ancestor that is a root not excluding it or a
// package whose package.workspace names one. Without any, the package is
// its own root.
func (l *loader) rootOf(path string, m *Manifest) (string, error) {
	switch {
	case m.Workspace != nil:
		return path, nil
	case m.Package != nil && m.Package.Workspace != "":
		return filepath.Join(filepath.Dir(path), m.Package.Workspace, "Cargo.toml"), nil
	}
	return l.findRoot(path)
}

// findRoot walks up from the package manifest current looking for a
// workspace root that does not exclude it; without one the package is its
// own root. An ancestor manifest that cannot be read or parsed fails the
// search, as it fails cargo's.
func (l *loader) findRoot(current string) (string, error) {
	pkgDir := filepath.Dir(current)
	for dir := filepath.Dir(pkgDir); ; {
		p := filepath.Join(dir, "Cargo.toml")
		if l.exists(p) {
			m, err := l.manifest(p)
			if err != nil {
				return "", fmt.Errorf("looking for the workspace of %s: %w", current, err)
			}
			switch {
			case m.Workspace != nil:
				if !isExcluded(dir, m.Workspace, pkgDir) {
					return p, nil
				}
			case m.Package != nil && m.Package.Workspace != "":
				// An ancestor package pointing at its root decides for
				// the packages below it too.
				return filepath.Join(dir, m.Package.Workspace, "Cargo.toml"), nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return current, nil
		}
		dir = parent
	}
}

// isExcluded reports whether the workspace at root leaves the package in
// dir out, as cargo decides: dir lies under an exclude entry and under no
// members entry taken literally (a glob entry is compared as written, so
// only an explicitly listed member overrides a broader exclude).
func isExcluded(root string, w *WorkspaceTable, dir string) bool {
	return under(root, w.Exclude, dir) && !under(root, w.Members, dir)
}

// under reports whether dir is one of the entries (relative to root) or
// lies below one.
func under(root string, entries []string, dir string) bool {
	for _, e := range entries {
		ex := e
		if !filepath.IsAbs(ex) {
			ex = filepath.Join(root, e)
		}
		if dir == ex || strings.HasPrefix(dir, ex+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// members expands [workspace] members and the path dependencies that
// belong to the workspace into ws.Members. As in cargo, the whole
// workspace fails on a member pattern matching a directory without a
// Cargo.toml, matching nothing at all, or not parsing, and on a member
// checkMember refuses.
func (l *loader) members(ws *Workspace) error {
	w := ws.RootManifest.Workspace
	seen := map[string]bool{}
	var queue []string
	push := func(dir string) {
		dir = filepath.Clean(dir)
		if seen[dir] {
			return
		}
		seen[dir] = true
		queue = append(queue, dir)
	}
	if ws.RootManifest.Package != nil {
		push(ws.Root)
	}
	for _, pat := range w.Members {
		full := pat
		if !filepath.IsAbs(full) {
			full = filepath.Join(ws.Root, pat)
		}
		if !hasMeta(pat) {
			push(full) // listed explicitly: no exclude entry overrides it
			continue
		}
		dirs, matched, err := l.glob(full)
		if err != nil {
			return fmt.Errorf("%s: workspace.members: %w, so cargo rejects the workspace", ws.RootManifest.Path, err)
		}
		if !matched {
			// cargo keeps a pattern matching nothing as a literal path,
			// and fails to load <pattern>/Cargo.toml.
			return fmt.Errorf("%s: workspace member pattern %q matches nothing, so cargo takes it as the literal path %s and rejects the workspace, failing to read %s; "+
				"remove the pattern or create a member it matches", ws.RootManifest.Path, pat, full, filepath.Join(full, "Cargo.toml"))
		}
		for _, d := range dirs {
			if isExcluded(ws.Root, w, d) {
				continue
			}
			if !l.exists(filepath.Join(d, "Cargo.toml")) {
				return fmt.Errorf("%s: workspace member %s (matched by %q in workspace.members) has no Cargo.toml, so cargo rejects the workspace; "+
					"narrow the pattern or add the directory to workspace.exclude", ws.RootManifest.Path, filepath.ToSlash(rel(ws.Root, d)), pat)
			}
			push(d)
		}
	}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		var m *Manifest
		var err error
		if dir == ws.Root {
			m = ws.RootManifest
			if m.Package == nil {
				// A virtual root listed among its own members ("." or a
				// glob reaching it through ".."): cargo passes over it.
				continue
			}
		} else {
			m, err = l.manifest(filepath.Join(dir, "Cargo.toml"))
		}
		if err != nil {
			ws.Errors = append(ws.Errors, fmt.Errorf("workspace member %s: %w", rel(ws.Root, dir), err))
			continue
		}
		if m.Package == nil {
			ws.Errors = append(ws.Errors, fmt.Errorf("workspace member %s: %s has no [package]", rel(ws.Root, dir), m.Path))
			continue
		}
		mem, err := l.member(ws, dir, m)
		if err != nil {
			ws.Errors = append(ws.Errors, fmt.Errorf("workspace member %s: %w", rel(ws.Root, dir), err))
			continue
		}
		ws.Members = append(ws.Members, mem)
		// Path dependencies inside the root are members too, and so is one
		// outside it whose manifest names this workspace as its root.
		for _, d := range mem.Deps {
			if d.Path == "" {
				continue
			}
			if d.Path != ws.Root && !strings.HasPrefix(d.Path, ws.Root+string(filepath.Separator)) {
				if !l.claims(ws, d.Path) {
					continue
				}
			}
			if isExcluded(ws.Root, w, d.Path) {
				continue
			}
			push(d.Path)
		}
	}
	sort.Slice(ws.Members, func(i, j int) bool { return ws.Members[i].Dir < ws.Members[j].Dir })
	for _, mem := range ws.Members {
		if err := l.checkMember(ws, mem); err != nil {
			return err
		}
	}
	return nil
}

// checkMember refuses a member that cargo refuses: one that is a workspace
// root itself (cargo: "multiple workspace roots found in the same
// workspace"), and one whose own search for its workspace does not end at
// ws's root (cargo: "is not hierarchically below the workspace root", or
// "is a member of the wrong workspace"). That search is cargo's: a
// package.workspace decides; else a member below the root belongs to it
// (cargo looks among the roots it has loaded first, so a nested
// [workspace] between them is passed over); else the nearest ancestor
// that is a root not excluding it, or a package naming one, decides.
func (l *loader) checkMember(ws *Workspace, mem *Member) error {
	if mem.Dir == ws.Root {
		return nil
	}
	m, rootPath := mem.Manifest, ws.RootManifest.Path
	name := filepath.ToSlash(rel(ws.Root, mem.Dir))
	if m.Workspace != nil {
		return fmt.Errorf("%s: workspace member %s has a [workspace] table of its own (%s), so cargo finds two workspace roots in one workspace and rejects it; "+
			"delete that [workspace] table, or add %q to workspace.exclude in %s", rootPath, name, m.Path, name, rootPath)
	}
	if m.Package.Workspace == "" && strings.HasPrefix(mem.Dir, ws.Root+string(filepath.Separator)) {
		return nil
	}
	root, err := l.rootOf(m.Path, m)
	if err != nil {
		return err
	}
	switch root = filepath.Clean(root); root {
	case rootPath:
		return nil
	case m.Path:
		return fmt.Errorf("%s: workspace member %s is not hierarchically below the workspace root %s, and %s does not name the root in package.workspace, so cargo rejects the workspace; "+
			"add workspace = %q to its [package], or remove it from workspace.members", rootPath, name, ws.Root, m.Path, filepath.ToSlash(rel(mem.Dir, ws.Root)))
	default:
		return fmt.Errorf("%s: workspace member %s belongs to the workspace whose root is %s, so cargo rejects the workspace (a member of the wrong workspace); "+
			"remove it from this workspace, or make %s exclude it", rootPath, name, root, root)
	}
}

// pathPackages reads the manifest of every path dependency of the members
// that is not a member into ws.PathPackages, observing what it reads; a
// crate cargo cannot load, or that declares another name than the
// dependency asks for, is a PathError (one per directory and name).
func (l *loader) pathPackages(ws *Workspace) {
	members := make(map[string]bool, len(ws.Members))
	for _, m := range ws.Members {
		members[m.Dir] = true
	}
	failed := map[string]bool{} // directories, and "dir\x00name" pairs
	for _, mem := range ws.Members {
		for _, d := range mem.Deps {
			if d.Path == "" {
				continue
			}
			dir := filepath.Clean(d.Path)
			if members[dir] || failed[dir] {
				continue
			}
			from := fmt.Sprintf("the path dependency %q of %s", d.Key, mem.Name)
			pkg, ok := ws.PathPackages[dir]
			if !ok {
				var err error
				if pkg, err = l.pathPackage(dir); err != nil {
					failed[dir] = true
					ws.PathErrors = append(ws.PathErrors, &PathError{Manifest: filepath.Join(dir, "Cargo.toml"), From: from, Err: err})
					continue
				}
				if ws.PathPackages == nil {
					ws.PathPackages = map[string]PathPackage{}
				}
				ws.PathPackages[dir] = pkg
			}
			if pkg.Name != d.Name && !failed[dir+"\x00"+d.Name] {
				failed[dir+"\x00"+d.Name] = true
				p := filepath.Join(dir, "Cargo.toml")
				ws.PathErrors = append(ws.PathErrors, &PathError{Manifest: p, From: from,
					Err: fmt.Errorf("%s declares the package %q, not %q (cargo: no matching package named %q found)", p, pkg.Name, d.Name, d.Name)})
			}
		}
	}
}

// redirects reads the path crate of every [patch] and [replace] entry of
// the root manifest into ws.Redirects, observing what it reads; one cargo
// cannot load, or that declares another name (for [replace], another
// version) than the entry asks for, is a PathError instead.
func (l *loader) redirects(ws *Workspace) {
	for _, r := range ws.RootManifest.Redirects {
		dir := r.Path
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(ws.Root, dir)
		}
		dir = filepath.Clean(dir)
		p := filepath.Join(dir, "Cargo.toml")
		pkg, err := l.pathPackage(dir)
		switch {
		case err != nil:
		case pkg.Name != r.Name:
			err = fmt.Errorf("%s declares the package %q, not %q", p, pkg.Name, r.Name)
		case r.Replace && pkg.Version != r.Version:
			err = fmt.Errorf("%s declares version %s, not %s (cargo: no matching package for override, version required: =%s); "+
				"make the [replace] key name version %s, or the crate's version %s", p, pkg.Version, r.Version, r.Version, pkg.Version, r.Version)
		}
		if err != nil {
			ws.PathErrors = append(ws.PathErrors, &PathError{Manifest: p, From: ws.RootManifest.Path + ": " + r.Table(), Err: err})
			continue
		}
		ws.Redirects = append(ws.Redirects, RedirectedPackage{Redirect: r, Dir: dir, Package: pkg})
	}
}

// pathPackage reads the package in dir, resolving an inherited version
// against the workspace that package belongs to. The error names the
// manifest and why cargo cannot load the package.
func (l *loader) pathPackage(dir string) (PathPackage, error) {
	p := filepath.Join(dir, "Cargo.toml")
	m, err := l.manifest(p)
	if err != nil {
		return PathPackage{}, err
	}
	if m.Package == nil {
		return PathPackage{}, fmt.Errorf("%s has no [package] (cargo finds a virtual manifest instead of a package manifest)", p)
	}
	v := m.Package.Version
	if m.Package.VersionInherited {
		root, err := l.rootOf(p, m)
		if err != nil {
			return PathPackage{}, fmt.Errorf("%s: version.workspace = true, but its workspace cannot be found: %w", p, err)
		}
		root = filepath.Clean(root)
		if root == p {
			return PathPackage{}, fmt.Errorf("%s: version.workspace = true, but the package belongs to no workspace", p)
		}
		rm, err := l.manifest(root)
		if err != nil {
			return PathPackage{}, fmt.Errorf("%s: version.workspace = true, but its workspace root cannot be read: %w", p, err)
		}
		if rm.Workspace == nil || rm.Workspace.PackageVersion == "" {
			return PathPackage{}, fmt.Errorf("%s: version.workspace = true, but the workspace root %s has no [workspace.package] version", p, root)
		}
		v = rm.Workspace.PackageVersion
	}
	if v == "" {
		v = "0.0.0"
	}
	return PathPackage{Name: m.Package.Name, Version: v}, nil
}

// claims reports whether the package in dir, outside ws's root, names ws
// as its workspace (through its own package.workspace or an ancestor's).
func (l *loader) claims(ws *Workspace, dir string) bool {
	p := filepath.Join(dir, "Cargo.toml")
	if !l.exists(p) {
		return false
	}
	m, err := l.manifest(p)
	if err != nil || m.Workspace != nil {
		return false
	}
	root, err := l.rootOf(p, m)
	return err == nil && filepath.Clean(root) == filepath.Join(ws.Root, "Cargo.toml")
}

// member resolves a member's version and dependencies.
func (l *loader) member(ws *Workspace, dir string, m *Manifest) (*Member, error) {
	if m.Package == nil {
		return nil, fmt.Errorf("%s has no [package]", m.Path)
	}
	mem := &Member{Dir: dir, Manifest: m, Name: m.Package.Name, Version: m.Package.Version}
	w := ws.RootManifest.Workspace
	if m.Package.VersionInherited {
		if w == nil || w.PackageVersion == "" {
			return nil, fmt.Errorf("%s: version.workspace = true but the workspace root %s has no [workspace.package] version", m.Path, ws.RootManifest.Path)
		}
		mem.Version = w.PackageVersion
	}
	if mem.Version == "" {
		mem.Version = "0.0.0"
	}
	mem.Deps = make([]Dependency, 0, len(m.Dependencies))
	for _, d := range m.Dependencies {
		if d.Inherit {
			var wd Dependency
			ok := false
			if w != nil {
				wd, ok = w.Dependencies[d.Key]
			}
			if !ok {
				return nil, fmt.Errorf("%s: dependency %q has workspace = true but [workspace.dependencies] in %s has no %q", m.Path, d.Key, ws.RootManifest.Path, d.Key)
			}
			inh := d
			inh.Name, inh.Req, inh.Git, inh.Registry = wd.Name, wd.Req, wd.Git, wd.Registry
			if wd.Name == wd.Key {
				inh.Name = d.Key
			}
			inh.Path = ""
			if wd.Path != "" {
				inh.Path = filepath.Join(ws.Root, wd.Path)
			}
			inh.Optional = d.Optional
			mem.Deps = append(mem.Deps, inh)
			continue
		}
		if d.Path != "" {
			d.Path = filepath.Join(dir, d.Path)
		}
		mem.Deps = append(mem.Deps, d)
	}
	return mem, nil
}

// glob expands a member pattern component by component, as cargo's glob
// crate does (see componentPattern): `*`, `?`, `[...]` and `[!...]` match
// within one path component, and `**` matches any number of directories
// (zero included). A component starting with a literal dot matches the
// special entries `.` and `..` too when it can (`crates/.*` matches
// crates/. and crates/..), as in the glob crate; the paths are cleaned
// (crates, the root), as cargo normalizes a member's path. It returns
// the directories matched, and whether
// anything matched at all: a pattern matching only files adds no member,
// one matching nothing is taken by cargo as a literal path. A pattern
// the glob crate cannot parse is an error. Every directory whose listing
// the result depends on, and every path looked up by name below a
// wildcard, is observed, so an entry added later invalidates a cache
// keyed on them.
func (l *loader) glob(pattern string) (dirs []string, matched bool, err error) {
	base := pattern
	for hasMeta(base) {
		base = filepath.Dir(base)
	}
	rest := strings.Trim(strings.TrimPrefix(pattern, base), string(filepath.Separator))
	parts := strings.Split(rest, string(filepath.Separator))
	pats := make([]componentPattern, len(parts))
	for i, part := range parts {
		if part == "**" || !hasMeta(part) {
			continue
		}
		if pats[i], err = compileComponent(part); err != nil {
			return nil, false, fmt.Errorf("could not parse pattern %q: %w", pattern, err)
		}
	}
	dirs = []string{base}
	for i, part := range parts {
		last := i == len(parts)-1
		var next []string
		for _, d := range dirs {
			if part == "**" {
				below := l.walkDirs(d)
				if last {
					below = below[1:] // a trailing ** matches at least one directory
				}
				next = append(next, below...)
				matched = matched || last && len(below) > 0
				continue
			}
			if !hasMeta(part) {
				// Looked up by name (a link leading nowhere is found too,
				// and is not a directory).
				p := filepath.Join(d, part)
				l.observe(p, ObservedProbe)
				if _, err := os.Lstat(p); err != nil {
					continue
				}
				matched = matched || last
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					next = append(next, p)
				}
				continue
			}
			l.observe(d, ObservedDir)
			f, err := os.Open(d)
			if err != nil {
				continue
			}
			names, err := f.Readdirnames(-1)
			f.Close()
			if err == nil && pats[i].leadingDot() && (i == 0 || parts[i-1] != "**") {
				// The glob crate offers `.` and `..` to a component
				// starting with a literal dot (`.*`, `.?`) when it lists
				// the directory itself: `crates/.*` matches crates/. and
				// crates/.., which cargo normalizes to crates and the
				// root. Right after `**` it matches the entries of the
				// directories walked by name instead, never these two.
				names = append(names, ".", "..")
			}
			for _, name := range names {
				if !pats[i].match(name) {
					continue
				}
				matched = matched || last
				m := filepath.Join(d, name)
				if fi, err := os.Stat(m); err == nil && fi.IsDir() {
					next = append(next, m)
				}
			}
		}
		dirs = next
	}
	sort.Strings(dirs)
	return slices.Compact(dirs), matched, nil
}

// walkDirs returns dir and every directory below it, observing each. It
// does not follow symbolic links. Like cargo's glob, it descends into hidden
// directories and target/ too: a `**` member pattern over a directory
// holding build output makes cargo reject the workspace, and so do we.
func (l *loader) walkDirs(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		l.observe(p, ObservedDir)
		out = append(out, p)
		return nil
	})
	return out
}

func hasMeta(p string) bool { return strings.ContainsAny(p, "*?[") }

func rel(root, p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}
