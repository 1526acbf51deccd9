// Package uvlock reads uv's lockfile, uv.lock (schema version 1, any
// revision).
package uvlock

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// Lock is a decoded uv.lock.
type Lock struct {
	Version  int
	Revision int
	// Members are the workspace member names of [manifest], normalized.
	Members  []string
	Packages []Package
}

// Package is one [[package]] entry, with what the readers of a lock use:
// a lock of tens of thousands of packages is held in memory whole, so
// nothing else of the table is kept (not its files, nor its dependencies
// apart from their references).
type Package struct {
	// Name is normalized; Version is as locked ("" for virtual packages).
	Name    string
	Version string
	// Source is never nil; packages with equal sources share one.
	Source *Source
	// ResolutionMarkers are the forks of the resolution this version
	// belongs to (PEP 508 markers, any of which holding selects it); none
	// when one version serves every environment.
	ResolutionMarkers []string
	// Edges are the package's dependency references (main, then extras,
	// then groups, each by name) with the version and marker uv records
	// when a name is locked at several versions.
	Edges []Edge
}

// Edge is one dependency reference of a locked package.
type Edge struct {
	// Name is normalized; Version and Marker are "" when not recorded.
	Name, Version, Marker string
}

// Source is where a package comes from: exactly one field is set.
type Source struct {
	Registry  string `toml:"registry"`
	Git       string `toml:"git"`
	Path      string `toml:"path"`
	Directory string `toml:"directory"`
	Editable  string `toml:"editable"`
	Virtual   string `toml:"virtual"`
	URL       string `toml:"url"`
}

// IsRoot reports whether the package is the project at the lock's
// directory (editable = "." or virtual = ".").
func (p Package) IsRoot() bool {
	return p.Source != nil && (p.Source.Editable == "." || p.Source.Virtual == ".")
}

// IsLocal reports whether the package is a source tree on disk.
func (p Package) IsLocal() bool {
	return p.Source != nil && p.Source.Editable != "" || p.Source.Virtual != "" || p.Source.Directory != "" || p.Source.Path != ""
}

type rawDep struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	Marker  string `toml:"marker"`
}

// rawHead is uv.lock without its [[package]] tables.
type rawHead struct {
	Version  *int `toml:"version"`
	Revision int  `toml:"revision"`
	Manifest struct {
		Members []string `toml:"members"`
	} `toml:"manifest"`
}

type rawPackage struct {
	Name                 string              `toml:"name"`
	Version              string              `toml:"version"`
	Source               Source              `toml:"source"`
	Dependencies         []rawDep            `toml:"dependencies"`
	OptionalDependencies map[string][]rawDep `toml:"optional-dependencies"`
	DevDependencies      map[string][]rawDep `toml:"dev-dependencies"`
	ResolutionMarkers    []string            `toml:"resolution-markers"`
}

type rawLock struct {
	rawHead
	Package []rawPackage `toml:"package"`
}

// Parse decodes a uv.lock. It refuses schema versions other than 1.
func Parse(data []byte) (*Lock, error) {
	return ParseReader(bytes.NewReader(data))
}

// ParseReader decodes the uv.lock r reads, one [[package]] table at a
// time, each converted to a Package as it is read and dropped, without
// holding the whole file or every decoded table in memory; a file in a
// shape that cannot be read that way is read again from the start and
// decoded whole.
func ParseReader(r io.ReadSeeker) (*Lock, error) {
	var head rawHead
	b := &builder{}
	whole, err := tomlfile.ReadTablesFunc(r, "package", &head, b.add)
	if err != nil {
		return nil, err
	}
	if whole != nil {
		var raw rawLock
		if err := tomlfile.Unmarshal("uv.lock", whole, &raw); err != nil {
			return nil, err
		}
		b = &builder{}
		for _, rp := range raw.Package {
			b.add(rp)
		}
		head = raw.rawHead
	}
	return b.finish(&head)
}

// builder converts the [[package]] tables of a uv.lock one at a time.
type builder struct {
	pkgs    []Package
	err     error              // the first package refused
	sources map[Source]*Source // the sources seen, to share them
}

// add converts the next [[package]] table. A bad name is recorded, to be
// reported once the head is checked (finish), and the package dropped.
func (b *builder) add(rp rawPackage) {
	if b.err != nil {
		return
	}
	if !pyname.Valid(rp.Name) {
		b.err = fmt.Errorf("uv.lock: package %d: bad name %q", len(b.pkgs)+1, rp.Name)
		return
	}
	p := Package{Name: normalize(rp.Name), Version: rp.Version, Source: b.source(rp.Source), ResolutionMarkers: rp.ResolutionMarkers}
	n := len(rp.Dependencies)
	for _, g := range rp.OptionalDependencies {
		n += len(g)
	}
	for _, g := range rp.DevDependencies {
		n += len(g)
	}
	if n > 0 {
		p.Edges = make([]Edge, 0, n)
	}
	p.Edges = appendEdges(p.Edges, rp.Dependencies)
	for _, k := range sortedKeys(rp.OptionalDependencies) {
		p.Edges = appendEdges(p.Edges, rp.OptionalDependencies[k])
	}
	for _, k := range sortedKeys(rp.DevDependencies) {
		p.Edges = appendEdges(p.Edges, rp.DevDependencies[k])
	}
	b.pkgs = append(b.pkgs, p)
}

// maxSources bounds the distinct sources shared.
const maxSources = 256

// source returns the source s, shared with the packages before it that
// have an equal one (most of a lock's packages come from one registry).
func (b *builder) source(s Source) *Source {
	if kept, ok := b.sources[s]; ok {
		return kept
	}
	if b.sources == nil {
		b.sources = map[Source]*Source{}
	}
	p := &s
	if len(b.sources) < maxSources {
		b.sources[s] = p
	}
	return p
}

// finish checks the lock's head and returns the lock.
func (b *builder) finish(head *rawHead) (*Lock, error) {
	if head.Version == nil {
		return nil, fmt.Errorf("uv.lock: no version key: not a uv lockfile")
	}
	if *head.Version != 1 {
		return nil, fmt.Errorf("uv.lock: schema version %d is not supported (this reader knows version 1)", *head.Version)
	}
	if b.err != nil {
		return nil, b.err
	}
	l := &Lock{Version: *head.Version, Revision: head.Revision, Packages: slices.Clip(b.pkgs)}
	for _, m := range head.Manifest.Members {
		l.Members = append(l.Members, normalize(m))
	}
	return l, nil
}

// appendEdges appends the dependency references of a list, names
// normalized.
func appendEdges(out []Edge, ds []rawDep) []Edge {
	for _, d := range ds {
		out = append(out, Edge{Name: normalize(d.Name), Version: d.Version, Marker: d.Marker})
	}
	return out
}

// normalize is pyname.Normalize without a copy of a name already
// normalized, as uv writes them.
func normalize(name string) string {
	if normalized(name) {
		return name
	}
	return pyname.Normalize(name)
}

// normalized reports whether name is already in PEP 503 normal form:
// lower case, runs of '-', '_' and '.' written as one '-', none at either
// end.
func normalized(name string) bool {
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'A' <= c && c <= 'Z', c == '_', c == '.':
			return false
		case c == '-' && (i == 0 || i == len(name)-1 || name[i+1] == '-'):
			return false
		}
	}
	return true
}

func sortedKeys(m map[string][]rawDep) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
