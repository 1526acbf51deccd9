// Package cargotoml reads Cargo.toml manifests and discovers the cargo
// workspace they form: the root manifest, its members (globs, exclude, path
// dependencies inside the root), and every member's dependencies from all
// dependency tables, with renames and workspace inheritance resolved.
//
// It never runs cargo and never touches the network.
package cargotoml

import (
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
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

// Error is a manifest problem, located by file and line when known.
type Error struct {
	File string
	Line int
	Msg  string
}

// Error renders the problem as file:line: message.
func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
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

// ReadFile reads and parses the manifest at path.
func ReadFile(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data)
}

// Parse parses manifest data; name is the file name used in errors.
func Parse(name string, data []byte) (*Manifest, error) {
	var raw rawManifest
	if err := toml.Unmarshal(data, &raw); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			msg := strings.TrimPrefix(de.Error(), "toml: ")
			if strings.HasPrefix(msg, "cannot decode") {
				msg = "invalid value for " + strings.Join(de.Key(), ".") + ": " + msg
			} else {
				msg = "invalid TOML: " + msg
			}
			return nil, &Error{File: name, Line: row, Msg: msg}
		}
		return nil, &Error{File: name, Msg: "invalid manifest: " + err.Error()}
	}
	m := &Manifest{Path: name}
	pkg := raw.Package
	if pkg == nil {
		pkg = raw.Project
	}
	if pkg != nil {
		p := &Package{Name: pkg.Name, Workspace: pkg.Workspace}
		switch v := pkg.Version.(type) {
		case nil:
		case string:
			p.Version = v
		case map[string]any:
			if w, _ := v["workspace"].(bool); w {
				p.VersionInherited = true
			} else {
				return nil, manifestErr(name, data, "version", "package.version: a table must be `{ workspace = true }`")
			}
		default:
			return nil, manifestErr(name, data, "version", fmt.Sprintf("package.version: want a string, got %T", v))
		}
		if p.Name == "" {
			return nil, manifestErr(name, data, "[package]", "[package] has no name")
		}
		m.Package = p
		m.Metadata = pkg.Metadata
	}
	if w := raw.Workspace; w != nil {
		wt := &WorkspaceTable{Members: w.Members, Exclude: w.Exclude, DefaultMembers: w.DefaultMembers}
		if w.Package != nil {
			wt.PackageVersion = w.Package.Version
		}
		if len(w.Dependencies) > 0 {
			deps, err := parseTable(name, data, w.Dependencies, Normal, "", "workspace.dependencies")
			if err != nil {
				return nil, err
			}
			wt.Dependencies = make(map[string]Dependency, len(deps))
			for _, d := range deps {
				if d.Inherit {
					return nil, manifestErr(name, data, d.Key, fmt.Sprintf("workspace.dependencies.%s: `workspace = true` is not allowed here", d.Key))
				}
				wt.Dependencies[d.Key] = d
			}
		}
		m.Workspace = wt
	}
	add := func(t map[string]any, k Kind, target, where string) error {
		deps, err := parseTable(name, data, t, k, target, where)
		if err != nil {
			return err
		}
		m.Dependencies = append(m.Dependencies, deps...)
		return nil
	}
	type tbl struct {
		t     map[string]any
		k     Kind
		where string
	}
	tables := func(target string, prefix string, ts ...tbl) error {
		for _, t := range ts {
			if err := add(t.t, t.k, target, prefix+t.where); err != nil {
				return err
			}
		}
		return nil
	}
	if err := tables("", "",
		tbl{raw.Dependencies, Normal, "dependencies"},
		tbl{raw.DevDependencies, Dev, "dev-dependencies"},
		tbl{raw.DevDependencies_, Dev, "dev_dependencies"},
		tbl{raw.BuildDependencies, Build, "build-dependencies"},
		tbl{raw.BuildDeps_, Build, "build_dependencies"},
	); err != nil {
		return nil, err
	}
	targets := make([]string, 0, len(raw.Target))
	for t := range raw.Target {
		targets = append(targets, t)
	}
	sort.Strings(targets)
	for _, t := range targets {
		rt := raw.Target[t]
		if err := tables(t, "target."+t+".",
			tbl{rt.Dependencies, Normal, "dependencies"},
			tbl{rt.DevDependencies, Dev, "dev-dependencies"},
			tbl{rt.DevDependencies_, Dev, "dev_dependencies"},
			tbl{rt.BuildDependencies, Build, "build-dependencies"},
			tbl{rt.BuildDeps_, Build, "build_dependencies"},
		); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func parseTable(file string, data []byte, t map[string]any, k Kind, target, where string) ([]Dependency, error) {
	if len(t) == 0 {
		return nil, nil
	}
	keys := make([]string, 0, len(t))
	for key := range t {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	out := make([]Dependency, 0, len(keys))
	for _, key := range keys {
		d := Dependency{Key: key, Name: key, Kind: k, Target: target}
		switch v := t[key].(type) {
		case string:
			d.Req = v
		case map[string]any:
			for field, val := range v {
				var ok bool
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
					ok = ok && d.Name != ""
				case "optional":
					d.Optional, ok = val.(bool)
				case "workspace":
					d.Inherit, ok = val.(bool)
					if ok && !d.Inherit {
						return nil, manifestErr(file, data, key, fmt.Sprintf("%s.%s: `workspace = false` is not allowed", where, key))
					}
				default:
					ok = true // features, default-features, branch, tag, rev, ...: not needed here
				}
				if !ok {
					return nil, manifestErr(file, data, key, fmt.Sprintf("%s.%s.%s: unexpected value %v (%T)", where, key, field, val, val))
				}
			}
		default:
			return nil, manifestErr(file, data, key, fmt.Sprintf("%s.%s: want a version string or a table, got %T", where, key, v))
		}
		out = append(out, d)
	}
	return out, nil
}

func manifestErr(file string, data []byte, near, msg string) *Error {
	return &Error{File: file, Line: lineOf(data, near), Msg: msg}
}

// lineOf returns the 1-based line of the first line that mentions s, or 0.
func lineOf(data []byte, s string) int {
	i := strings.Index(string(data), s)
	if i < 0 {
		return 0
	}
	return 1 + strings.Count(string(data[:i]), "\n")
}
