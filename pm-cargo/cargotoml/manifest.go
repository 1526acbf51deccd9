// Package cargotoml reads Cargo.toml manifests and discovers the cargo
// workspace they form: the root manifest, its members (globs, exclude, path
// dependencies inside the root), and every member's dependencies from all
// dependency tables, with renames and workspace inheritance resolved.
//
// It never runs cargo and never touches the network.
package cargotoml

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// Manifest is a parsed Cargo.toml.
type Manifest struct {
	// Path is the manifest's path as given to Parse.
	Path string
	// Package is the [package] table, or nil for a virtual manifest.
	Package *Package
	// Workspace is the [workspace] table, or nil.
	Workspace *WorkspaceTable
	// Dependencies lists every dependency of every table in a stable order:
	// dependencies, dev-dependencies, build-dependencies, then each
	// target's tables in target order, each table sorted by key.
	Dependencies []Dependency
	// Metadata is the raw [package.metadata] table, or nil.
	Metadata map[string]any
	// Redirects are the entries of [patch.<source>] and [replace] that
	// lead a crate to a path crate, patches first, each table sorted by
	// key. cargo heeds them in the workspace root's manifest only.
	Redirects []Redirect
}

// Redirect is an entry of [patch.<source>] or [replace] with a `path` key:
// cargo takes the crate from that directory instead of its source.
type Redirect struct {
	// Replace marks a [replace] entry; otherwise it is a [patch] one.
	Replace bool
	// Source is the <source> of [patch.<source>]: crates-io, a registry's
	// name or a source URL. Empty for [replace].
	Source string
	// Key is the entry's key as written: a crate name under [patch], a
	// package id spec ("name:version", "name@version", "url#name@version")
	// under [replace].
	Key string
	// Name is the crate cargo looks for at Path: the `package` key, else
	// Key, under [patch]; the spec's name under [replace].
	Name string
	// Version is the exact version a [replace] spec names, which the path
	// crate must declare; empty under [patch].
	Version string
	// Path is the `path` key as written, relative to the manifest's
	// directory.
	Path string
}

// Table names where the entry is, as a user finds it: `[patch.crates-io]
// entry "heck"`, `[patch."https://host/repo"] entry "x"` or `[replace]
// entry "fnv:1.0.7"`.
func (r Redirect) Table() string {
	if r.Replace {
		return fmt.Sprintf("[replace] entry %q", r.Key)
	}
	src := r.Source
	if strings.IndexFunc(src, func(c rune) bool {
		return !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}) >= 0 || src == "" {
		src = strconv.Quote(src)
	}
	return fmt.Sprintf("[patch.%s] entry %q", src, r.Key)
}

// Package is the [package] table.
type Package struct {
	Name string
	// Version is the package version; empty when absent (cargo then uses
	// 0.0.0) or inherited and not yet resolved.
	Version string
	// VersionInherited is set by `version.workspace = true`.
	VersionInherited bool
	// Workspace is the `package.workspace` key: the path to the workspace
	// root, relative to the package directory; empty when absent.
	Workspace string
}

// WorkspaceTable is the [workspace] table.
type WorkspaceTable struct {
	Members        []string
	Exclude        []string
	DefaultMembers []string
	// Dependencies are [workspace.dependencies] by key.
	Dependencies map[string]Dependency
	// PackageVersion is [workspace.package] version, or empty.
	PackageVersion string
}

// Kind is a dependency kind.
type Kind string

// The dependency kinds.
const (
	Normal Kind = "normal"
	Dev    Kind = "dev"
	Build  Kind = "build"
)

// Dependency is one entry of a dependency table.
type Dependency struct {
	// Key is the name the dependency has in the table (the rename, if any).
	Key string
	// Name is the real package name: the `package` key when renamed, else Key.
	Name string
	// Req is the version requirement as written; empty when none.
	Req string
	// Path is the `path` key as written; empty when none.
	Path string
	// Git is the `git` URL; empty when none.
	Git string
	// Registry names an alternative registry; empty for crates.io.
	Registry string
	// Optional is `optional = true`.
	Optional bool
	// Inherit is `workspace = true`: the entry takes its source from
	// [workspace.dependencies].
	Inherit bool
	// Kind is the table's kind.
	Kind Kind
	// Target is the cfg expression or target triple of a
	// [target.<t>.*dependencies] table; empty otherwise.
	Target string
}

type rawManifest struct {
	Package           *rawPackage          `toml:"package"`
	Project           *rawPackage          `toml:"project"`
	Workspace         *rawWorkspace        `toml:"workspace"`
	Dependencies      map[string]any       `toml:"dependencies"`
	DevDependencies   map[string]any       `toml:"dev-dependencies"`
	DevDependencies_  map[string]any       `toml:"dev_dependencies"`
	BuildDependencies map[string]any       `toml:"build-dependencies"`
	BuildDeps_        map[string]any       `toml:"build_dependencies"`
	Target            map[string]rawTarget `toml:"target"`
}

type rawPackage struct {
	Name      string         `toml:"name"`
	Version   any            `toml:"version"`
	Workspace string         `toml:"workspace"`
	Metadata  map[string]any `toml:"metadata"`
}

type rawWorkspace struct {
	Members        []string       `toml:"members"`
	Exclude        []string       `toml:"exclude"`
	DefaultMembers []string       `toml:"default-members"`
	Dependencies   map[string]any `toml:"dependencies"`
	Package        *struct {
		Version string `toml:"version"`
	} `toml:"package"`
}

type rawTarget struct {
	Dependencies      map[string]any `toml:"dependencies"`
	DevDependencies   map[string]any `toml:"dev-dependencies"`
	DevDependencies_  map[string]any `toml:"dev_dependencies"`
	BuildDependencies map[string]any `toml:"build-dependencies"`
	BuildDeps_        map[string]any `toml:"build_dependencies"`
}

// ReadFile reads and parses the manifest at path, with
// pkgfile.ReadUserFile: links are followed, and a FIFO, a device or a
// file over pkgfile.MaxManifest is an error naming it.
func ReadFile(path string) (*Manifest, error) {
	data, err := pkgfile.ReadUserFile(path, pkgfile.MaxManifest)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses manifest data; name is the file name used in errors. A
// syntax error is a *tomlfile.Error; otherwise every problem of the file
// (values of the wrong type, a missing name, a bad dependency entry) is
// reported together, in line order, as tomlfile.Errors.
func Parse(name string, data []byte) (*Manifest, error) {
	p := &parser{file: name, data: data}
	var raw rawManifest
	if err := toml.Unmarshal(data, &raw); err != nil {
		// Slow path: a syntax error, or values of the wrong type, all of
		// which are reported; the rest of the manifest is still read.
		var tree map[string]any
		if err := tomlfile.Unmarshal(name, data, &tree); err != nil {
			return nil, err
		}
		raw = rawManifest{}
		p.errs = tomlfile.DecodeTree(name, data, tree, &raw)
	}
	m := &Manifest{Path: name}
	pkg, pkgKey := raw.Package, "package"
	if pkg == nil {
		pkg, pkgKey = raw.Project, "project"
	}
	if pkg != nil {
		pk := &Package{Name: pkg.Name, Workspace: pkg.Workspace}
		switch v := pkg.Version.(type) {
		case nil:
		case string:
			pk.Version = v
		case map[string]any:
			if w, _ := v["workspace"].(bool); w {
				pk.VersionInherited = true
			} else {
				p.fail("a table must be `{ workspace = true }`", pkgKey, "version")
			}
		default:
			p.fail("expected a version string or `{ workspace = true }`, found "+tomlfile.ValueWords(v), pkgKey, "version")
		}
		if pk.Name == "" && !slices.ContainsFunc(p.errs, func(e *tomlfile.Error) bool { return e.Key == pkgKey+".name" }) {
			pe := tomlfile.At(name, p.positions(), "["+pkgKey+"] has no name", pkgKey)
			pe.Key = ""
			p.errs = append(p.errs, pe)
		}
		m.Package = pk
		m.Metadata = pkg.Metadata
	}
	if w := raw.Workspace; w != nil {
		wt := &WorkspaceTable{Members: w.Members, Exclude: w.Exclude, DefaultMembers: w.DefaultMembers}
		if w.Package != nil {
			wt.PackageVersion = w.Package.Version
		}
		if len(w.Dependencies) > 0 {
			deps := p.table(w.Dependencies, Normal, "", "workspace", "dependencies")
			wt.Dependencies = make(map[string]Dependency, len(deps))
			for _, d := range deps {
				if d.Inherit {
					p.fail("`workspace = true` is not allowed here", "workspace", "dependencies", d.Key)
					continue
				}
				wt.Dependencies[d.Key] = d
			}
		}
		m.Workspace = wt
	}
	type tbl struct {
		t     map[string]any
		k     Kind
		where string
	}
	tables := func(target string, prefix []string, ts ...tbl) {
		for _, t := range ts {
			m.Dependencies = append(m.Dependencies, p.table(t.t, t.k, target, append(slices.Clone(prefix), t.where)...)...)
		}
	}
	tables("", nil,
		tbl{raw.Dependencies, Normal, "dependencies"},
		tbl{raw.DevDependencies, Dev, "dev-dependencies"},
		tbl{raw.DevDependencies_, Dev, "dev_dependencies"},
		tbl{raw.BuildDependencies, Build, "build-dependencies"},
		tbl{raw.BuildDeps_, Build, "build_dependencies"},
	)
	targets := make([]string, 0, len(raw.Target))
	for t := range raw.Target {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		rt := raw.Target[t]
		tables(t, []string{"target", t},
			tbl{rt.Dependencies, Normal, "dependencies"},
			tbl{rt.DevDependencies, Dev, "dev-dependencies"},
			tbl{rt.DevDependencies_, Dev, "dev_dependencies"},
			tbl{rt.BuildDependencies, Build, "build-dependencies"},
			tbl{rt.BuildDeps_, Build, "build_dependencies"},
		)
	}
	if bytes.Contains(data, []byte("replace")) && bytes.Contains(data, []byte("patch")) {
		p.replaceAndPatch()
	}
	if bytes.Contains(data, []byte("replace")) || bytes.Contains(data, []byte("patch")) {
		m.Redirects = p.redirects()
	}
	if m.Package == nil && m.Workspace != nil {
		p.virtualSections()
	}
	if len(p.errs) > 0 {
		p.errs.Sort()
		return nil, p.errs.Err()
	}
	return m, nil
}

// replaceAndPatch refuses a manifest with both a [replace] and a [patch]
// table, empty or not, as cargo does.
func (p *parser) replaceAndPatch() {
	var top map[string]any
	if err := toml.Unmarshal(p.data, &top); err != nil {
		return // the syntax error is reported already
	}
	_, replace := top["replace"]
	_, patch := top["patch"]
	if replace && patch {
		p.fail("cannot specify both [replace] and [patch] (cargo refuses the manifest); "+
			"keep [patch]: move each [replace] entry into it (\"name:version\" = { ... } becomes name = { ... } "+
			"under [patch.crates-io], or under [patch.'<source URL>'] for another source), then delete [replace]", "replace")
	}
}

// redirects reads the [patch.<source>] and [replace] entries that have a
// string `path`, leniently: any other entry or value is not one, and is
// left to cargo to judge.
func (p *parser) redirects() []Redirect {
	var top map[string]any
	if err := toml.Unmarshal(p.data, &top); err != nil {
		return nil // the syntax error is reported already
	}
	entry := func(v any) (path, pkg string) {
		t, _ := v.(map[string]any)
		path, _ = t["path"].(string)
		pkg, _ = t["package"].(string)
		return path, pkg
	}
	var out []Redirect
	patch, _ := top["patch"].(map[string]any)
	for _, src := range slices.Sorted(maps.Keys(patch)) {
		entries, _ := patch[src].(map[string]any)
		for _, key := range slices.Sorted(maps.Keys(entries)) {
			path, pkg := entry(entries[key])
			if path == "" {
				continue
			}
			if pkg == "" {
				pkg = key
			}
			out = append(out, Redirect{Source: src, Key: key, Name: pkg, Path: path})
		}
	}
	replace, _ := top["replace"].(map[string]any)
	for _, key := range slices.Sorted(maps.Keys(replace)) {
		path, _ := entry(replace[key])
		name, version, ok := replaceSpec(key)
		if path == "" || !ok {
			continue // cargo refuses a spec without a version itself
		}
		out = append(out, Redirect{Replace: true, Key: key, Name: name, Version: version, Path: path})
	}
	return out
}

// replaceSpec reads the package id spec of a [replace] key: "name:version"
// or "name@version", optionally after a source URL and "#", or
// "url#version" naming the crate by the URL's last path segment.
func replaceSpec(key string) (name, version string, ok bool) {
	spec := key
	if url, frag, cut := strings.Cut(key, "#"); cut {
		spec = frag
		if !strings.ContainsAny(frag, ":@") {
			url = strings.TrimSuffix(url, "/")
			spec = url[strings.LastIndex(url, "/")+1:] + "@" + frag
		}
	}
	i := strings.IndexAny(spec, ":@")
	if i <= 0 || i == len(spec)-1 {
		return "", "", false
	}
	return spec[:i], spec[i+1:], true
}

// virtualOnlyPackage are the top-level keys cargo refuses in a virtual
// manifest (one with [workspace] and no [package]), in the order cargo
// checks them; the second name is how cargo's message spells the key.
var virtualOnlyPackage = [][2]string{
	{"lib", "lib"}, {"bin", "bin"}, {"example", "example"}, {"test", "test"}, {"bench", "bench"},
	{"dependencies", "dependencies"},
	{"dev-dependencies", "dev-dependencies"}, {"dev_dependencies", "dev-dependencies"},
	{"build-dependencies", "build-dependencies"}, {"build_dependencies", "build-dependencies"},
	{"features", "features"}, {"target", "target"}, {"badges", "badges"}, {"lints", "lints"},
}

// virtualSections refuses, as cargo does, a virtual manifest with a
// section only a package can have ([dependencies], [target.*], [lib],
// ...), empty or not.
func (p *parser) virtualSections() {
	var top map[string]any
	if err := toml.Unmarshal(p.data, &top); err != nil {
		return // the syntax error is reported already
	}
	for _, k := range virtualOnlyPackage {
		if _, ok := top[k[0]]; !ok {
			continue
		}
		hint := "move it into a member's Cargo.toml"
		if strings.Contains(k[1], "dependencies") || k[1] == "target" {
			hint = "move the entries into a member's Cargo.toml, or into [workspace.dependencies] for members to inherit with `workspace = true`"
		}
		p.fail(fmt.Sprintf("this virtual manifest specifies a `%s` section, which is not allowed (cargo refuses a manifest with [workspace] and no [package] that has one); %s", k[1], hint), k[0])
	}
}

// parser collects the problems of one manifest.
type parser struct {
	file string
	data []byte
	pos  *tomlfile.Positions // indexed on the first problem
	errs tomlfile.Errors
}

// positions returns the index of the manifest's keys.
func (p *parser) positions() *tomlfile.Positions {
	if p.pos == nil {
		p.pos = tomlfile.Index(p.data)
	}
	return p.pos
}

// fail records a problem with the value at the key path.
func (p *parser) fail(msg string, path ...string) {
	p.errs = append(p.errs, tomlfile.At(p.file, p.positions(), msg, path...))
}

// table reads the dependency table t at the key path where.
func (p *parser) table(t map[string]any, k Kind, target string, where ...string) []Dependency {
	if len(t) == 0 {
		return nil
	}
	keys := make([]string, 0, len(t))
	for key := range t {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	out := make([]Dependency, 0, len(keys))
	for _, key := range keys {
		at := append(slices.Clone(where), key)
		d := Dependency{Key: key, Name: key, Kind: k, Target: target}
		switch v := t[key].(type) {
		case string:
			d.Req = v
		case map[string]any:
			bad := false
			for field, val := range v {
				var ok bool
				want := "a string"
				switch field {
				case "version":
					d.Req, ok = val.(string)
				case "path":
					d.Path, ok = val.(string)
				case "git":
					d.Git, ok = val.(string)
				case "registry":
					d.Registry, ok = val.(string)
				case "package":
					d.Name, ok = val.(string)
					if ok && d.Name == "" {
						p.fail("the package name is empty", append(at, field)...)
						bad = true
						continue
					}
				case "optional":
					d.Optional, ok = val.(bool)
					want = "true or false"
				case "workspace":
					d.Inherit, ok = val.(bool)
					want = "true"
					if ok && !d.Inherit {
						p.fail("`workspace = false` is not allowed", append(at, field)...)
						bad = true
						continue
					}
				default:
					ok = true // features, default-features, branch, tag, rev, ...: not needed here
				}
				if !ok {
					p.fail("expected "+want+", found "+tomlfile.ValueWords(val), append(at, field)...)
					bad = true
				}
			}
			if bad {
				continue
			}
		default:
			p.fail("expected a version string or a table, found "+tomlfile.ValueWords(v), at...)
			continue
		}
		out = append(out, d)
	}
	return out
}
