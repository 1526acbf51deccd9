// Package uvlock reads uv's lockfile, uv.lock (schema version 1, any
// revision).
package uvlock

import (
	"fmt"
	"io"
	"sort"

	"github.com/symposium-dev/symposium-pm/pm-pypi/pyname"
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

// Package is one [[package]] entry.
type Package struct {
	// Name is normalized; Version is as locked ("" for virtual packages).
	Name    string
	Version string
	Source  Source
	// Dependencies are the normalized names of the package's dependencies.
	Dependencies []string
	// Optional are its extras' dependencies, DevGroups its dependency
	// groups' (normalized names).
	Optional  map[string][]string
	DevGroups map[string][]string
	// ResolutionMarkers are the forks of the resolution this version
	// belongs to (PEP 508 markers, any of which holding selects it); none
	// when one version serves every environment.
	ResolutionMarkers []string
	// Edges are the package's dependency references (main, then extras,
	// then groups) with the version and marker uv records when a name is
	// locked at several versions.
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
func (p Package) IsRoot() bool { return p.Source.Editable == "." || p.Source.Virtual == "." }

// IsLocal reports whether the package is a source tree on disk.
func (p Package) IsLocal() bool {
	return p.Source.Editable != "" || p.Source.Virtual != "" || p.Source.Directory != "" || p.Source.Path != ""
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
	var raw rawLock
	// One [[package]] table at a time, the way uv writes the file (less
	// memory on a large lock); anything else at once.
	if pkgs, ok := tomlfile.UnmarshalTables[rawPackage](data, "package", &raw.rawHead); ok {
		raw.Package = pkgs
	} else if err := tomlfile.Unmarshal("uv.lock", data, &raw); err != nil {
		return nil, err
	}
	return fromRaw(&raw)
}

// ParseReader decodes the uv.lock r reads, one [[package]] table at a
// time, without holding the whole file in memory; a file in a shape that
// cannot be read that way is read again from the start and decoded whole.
func ParseReader(r io.ReadSeeker) (*Lock, error) {
	var raw rawLock
	pkgs, whole, err := tomlfile.ReadTables[rawPackage](r, "package", &raw.rawHead)
	if err != nil {
		return nil, err
	}
	if whole != nil {
		return Parse(whole)
	}
	raw.Package = pkgs
	return fromRaw(&raw)
}

// fromRaw checks and converts a decoded uv.lock.
func fromRaw(raw *rawLock) (*Lock, error) {
	if raw.Version == nil {
		return nil, fmt.Errorf("uv.lock: no version key: not a uv lockfile")
	}
	if *raw.Version != 1 {
		return nil, fmt.Errorf("uv.lock: schema version %d is not supported (this reader knows version 1)", *raw.Version)
	}
	l := &Lock{Version: *raw.Version, Revision: raw.Revision, Packages: make([]Package, 0, len(raw.Package))}
	for _, m := range raw.Manifest.Members {
		l.Members = append(l.Members, pyname.Normalize(m))
	}
	names := func(ds []rawDep) []string {
		out := make([]string, 0, len(ds))
		for _, d := range ds {
			out = append(out, pyname.Normalize(d.Name))
		}
		return out
	}
	for i, rp := range raw.Package {
		if !pyname.Valid(rp.Name) {
			return nil, fmt.Errorf("uv.lock: package %d: bad name %q", i+1, rp.Name)
		}
		p := Package{Name: pyname.Normalize(rp.Name), Version: rp.Version, Source: rp.Source,
			Dependencies: names(rp.Dependencies), ResolutionMarkers: rp.ResolutionMarkers}
		for _, group := range [][]rawDep{rp.Dependencies} {
			p.Edges = append(p.Edges, edges(group)...)
		}
		for _, k := range sortedKeys(rp.OptionalDependencies) {
			p.Edges = append(p.Edges, edges(rp.OptionalDependencies[k])...)
		}
		for _, k := range sortedKeys(rp.DevDependencies) {
			p.Edges = append(p.Edges, edges(rp.DevDependencies[k])...)
		}
		if len(rp.OptionalDependencies) > 0 {
			p.Optional = map[string][]string{}
			for k, v := range rp.OptionalDependencies {
				p.Optional[k] = names(v)
			}
		}
		if len(rp.DevDependencies) > 0 {
			p.DevGroups = map[string][]string{}
			for k, v := range rp.DevDependencies {
				p.DevGroups[k] = names(v)
			}
		}
		l.Packages = append(l.Packages, p)
		raw.Package[i] = rawPackage{} // what is not kept can be collected
	}
	return l, nil
}

// edges returns the dependency references of a list, names normalized.
func edges(ds []rawDep) []Edge {
	out := make([]Edge, 0, len(ds))
	for _, d := range ds {
		out = append(out, Edge{Name: pyname.Normalize(d.Name), Version: d.Version, Marker: d.Marker})
	}
	return out
}

func sortedKeys(m map[string][]rawDep) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
