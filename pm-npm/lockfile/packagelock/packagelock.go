// Package packagelock reads npm's package-lock.json and npm-shrinkwrap.json,
// lockfileVersion 1 (npm 5/6), 2 (npm 7/8) and 3 (npm 9+), plus the
// version-less shrinkwrap files older npm wrote.
//
// Version 2 and 3 files are read through their "packages" map, keyed by
// install location; version 1 files through the hoisted "dependencies" tree,
// which records what sits at the top of node_modules and so answers for
// the root package only.
package packagelock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

// Lock is a parsed package-lock.json or npm-shrinkwrap.json.
type Lock struct {
	// LockfileVersion is the declared version: 0 when absent, else 1, 2 or 3.
	LockfileVersion int
	// Packages is the v2/v3 map from install location ("" is the root,
	// "node_modules/x", "packages/a", ...) to what is installed there.
	Packages map[string]Package
	// Dependencies is the v1 hoisted tree (also present in v2 files).
	Dependencies map[string]V1Dep
}

// Package is one entry of the "packages" map.
type Package struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Resolved  string `json:"resolved"`
	Integrity string `json:"integrity"`
	Link      bool   `json:"link"`
	Dev       bool   `json:"dev"`
	Optional  bool   `json:"optional"`
}

// V1Dep is one entry of the v1 "dependencies" tree. Version may be
// "npm:real@1.2.3" for an alias, a git URL or a "file:" location.
type V1Dep struct {
	Version   string `json:"version"`
	Resolved  string `json:"resolved"`
	Integrity string `json:"integrity"`
	Dev       bool   `json:"dev"`
	Optional  bool   `json:"optional"`
}

// Parse parses a package-lock.json or npm-shrinkwrap.json document.
func Parse(data []byte) (*Lock, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	// Fast path: a well-formed lockfile decodes in one pass.
	var typed struct {
		LockfileVersion json.RawMessage    `json:"lockfileVersion"`
		Packages        map[string]Package `json:"packages"`
		Dependencies    map[string]V1Dep   `json:"dependencies"`
	}
	if json.Unmarshal(data, &typed) == nil {
		l := &Lock{Packages: typed.Packages, Dependencies: typed.Dependencies}
		if err := l.setVersion(typed.LockfileVersion); err != nil {
			return nil, err
		}
		return l, nil
	}
	// Slow path: skip entries of the wrong shape.
	var raw struct {
		LockfileVersion json.RawMessage            `json:"lockfileVersion"`
		Packages        map[string]json.RawMessage `json:"packages"`
		Dependencies    map[string]json.RawMessage `json:"dependencies"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("invalid package lock: %w", err)
	}
	l := &Lock{}
	if err := l.setVersion(raw.LockfileVersion); err != nil {
		return nil, err
	}
	if len(raw.Packages) > 0 {
		l.Packages = make(map[string]Package, len(raw.Packages))
		for k, v := range raw.Packages {
			var p Package
			if json.Unmarshal(v, &p) == nil { // an entry of the wrong shape is skipped
				l.Packages[k] = p
			}
		}
	}
	if len(raw.Dependencies) > 0 {
		l.Dependencies = make(map[string]V1Dep, len(raw.Dependencies))
		for k, v := range raw.Dependencies {
			var d V1Dep
			if json.Unmarshal(v, &d) == nil {
				l.Dependencies[k] = d
			}
		}
	}
	return l, nil
}

func (l *Lock) setVersion(v json.RawMessage) error {
	if len(v) == 0 || string(v) == "null" {
		return nil
	}
	if err := json.Unmarshal(v, &l.LockfileVersion); err != nil {
		return fmt.Errorf("invalid package lock: lockfileVersion %s is not an integer", v)
	}
	if l.LockfileVersion < 1 {
		return fmt.Errorf("invalid package lock: unknown lockfileVersion %d", l.LockfileVersion)
	}
	return nil
}

// Resolve implements lockfile.Resolver. For v2/v3 it looks the name up the
// way Node's resolution would from the importer's directory
// (importer/node_modules/name, then each parent's node_modules), following
// links to their target's version; for v1 it reads the top of the tree.
func (l *Lock) Resolve(importer, name, spec string) (lockfile.Resolution, bool) {
	importer = lockfile.CleanImporter(importer)
	if l.Packages != nil {
		dir := importer
		for {
			key := path.Join(dir, "node_modules", name)
			if p, ok := l.Packages[key]; ok {
				return l.fromPackage(name, p), true
			}
			if dir == "" {
				break
			}
			dir = path.Dir(dir)
			if dir == "." {
				dir = ""
			}
		}
		if l.LockfileVersion >= 2 || importer != "" {
			return lockfile.Resolution{}, false
		}
	}
	if importer != "" {
		return lockfile.Resolution{}, false
	}
	d, ok := l.Dependencies[name]
	if !ok {
		return lockfile.Resolution{}, false
	}
	return fromV1(name, d), true
}

func (l *Lock) fromPackage(name string, p Package) lockfile.Resolution {
	if p.Link {
		target := lockfile.JoinRel("", p.Resolved)
		t := l.Packages[target]
		return lockfile.Resolution{Name: name, Version: t.Version, Link: target}
	}
	r := lockfile.Resolution{Name: name, Version: p.Version}
	if p.Name != "" {
		r.Name = p.Name
	}
	if r.Version == "" {
		r.Version = p.Resolved
	}
	return r
}

func fromV1(name string, d V1Dep) lockfile.Resolution {
	v := d.Version
	switch {
	case strings.HasPrefix(v, "npm:"):
		rest := v[len("npm:"):]
		i := strings.LastIndex(rest, "@")
		if i > 0 {
			return lockfile.Resolution{Name: rest[:i], Version: rest[i+1:]}
		}
	case strings.HasPrefix(v, "file:"):
		return lockfile.Resolution{Name: name, Version: v, Link: lockfile.JoinRel("", v[len("file:"):])}
	}
	return lockfile.Resolution{Name: name, Version: v}
}
