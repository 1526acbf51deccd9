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
	l.observe(path, ObservedProbe)
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
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
	l := &loader{opts: opts, cache: map[string]*Manifest{}, errors: map[string]error{}}
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
	rootPath := l.rootOf(current, cm)
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
		return ws, nil
	}
	if err := l.members(ws); err != nil {
		return nil, err
	}
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
func (l *loader) rootOf(path string, m *Manifest) string {
	switch {
	case m.Workspace != nil:
		return path
	case m.Package != nil && m.Package.Workspace != "":
		return filepath.Join(filepath.Dir(path), m.Package.Workspace, "Cargo.toml")
	}
	return l.findRoot(path)
}

// findRoot walks up from the package manifest current looking for a
// workspace root that does not exclude it; without one the package is its
// own root.
func (l *loader) findRoot(current string) string {
	pkgDir := filepath.Dir(current)
	for dir := filepath.Dir(pkgDir); ; {
		p := filepath.Join(dir, "Cargo.toml")
		if l.exists(p) {
			if m, err := l.manifest(p); err == nil {
				switch {
				case m.Workspace != nil:
					if !isExcluded(dir, m.Workspace, pkgDir) {
						return p
					}
				case m.Package != nil && m.Package.Workspace != "":
					// An ancestor package pointing at its root decides for
					// the packages below it too.
					return filepath.Join(dir, m.Package.Workspace, "Cargo.toml")
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return current
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
// belong to the workspace into ws.Members. A member pattern matching a
// directory without a Cargo.toml fails the whole workspace, as in cargo.
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
		for _, d := range l.glob(full) {
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
	return nil
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
	return filepath.Clean(l.rootOf(p, m)) == filepath.Join(ws.Root, "Cargo.toml")
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
// does: `*`, `?` and `[...]` match within one path component, and `**`
// matches any number of directories (zero included). Only directories are
// returned. Every directory whose listing the result depends on is
// observed, so an entry added later invalidates a cache keyed on them.
func (l *loader) glob(pattern string) []string {
	base := pattern
	for hasMeta(base) {
		base = filepath.Dir(base)
	}
	rest := strings.Trim(strings.TrimPrefix(pattern, base), string(filepath.Separator))
	dirs := []string{base}
	parts := strings.Split(rest, string(filepath.Separator))
	for i, part := range parts {
		var next []string
		for _, d := range dirs {
			if part == "**" {
				below := l.walkDirs(d)
				if i == len(parts)-1 {
					below = below[1:] // a trailing ** matches at least one directory
				}
				next = append(next, below...)
				continue
			}
			if !hasMeta(part) {
				p := filepath.Join(d, part)
				if fi, err := os.Stat(p); err == nil && fi.IsDir() {
					next = append(next, p)
				}
				continue
			}
			l.observe(d, ObservedDir)
			ms, _ := filepath.Glob(filepath.Join(d, part))
			for _, m := range ms {
				if fi, err := os.Stat(m); err == nil && fi.IsDir() {
					next = append(next, m)
				}
			}
		}
		dirs = next
	}
	sort.Strings(dirs)
	return slices.Compact(dirs)
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
