// Package packagelock reads npm's package-lock.json and npm-shrinkwrap.json,
// lockfileVersion 1 (npm 5/6), 2 (npm 7/8) and 3 (npm 9+), plus the
// version-less shrinkwrap files older npm wrote.
//
// Version 2 and 3 files are read through their "packages" map, keyed by
// install location. Version 1 files (and version-less ones) have only the
// nested "dependencies" tree; it is turned into the same map the way npm
// migrates it: an entry whose version is a "file:" directory is a link, and
// the dependencies nested under a link live under the link's target, which
// is how a workspace member's own dependencies are recorded.
//
// Files of every version are read with the object semantics of JSON.parse,
// which npm reads them with: a member is taken only under its exact name
// ("Version" is not "version", "Dependencies" not "dependencies") and a
// repeated name's last value replaces the earlier one whole.
package packagelock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
)

// Lock is a parsed package-lock.json or npm-shrinkwrap.json.
type Lock struct {
	// LockfileVersion is the declared version: 0 when absent, else 1, 2 or 3.
	LockfileVersion int
	// Packages is the v2/v3 map from install location ("" is the root,
	// "node_modules/x", "packages/a", ...) to what is installed there.
	Packages map[string]Package
	// Dependencies is the v1 tree, read only when the file has no
	// "packages" map (v1 and version-less files); nil otherwise. It is
	// read as JSON.parse reads it (scanV1): exact names, the last of a
	// repeated one winning.
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
	// Dependencies are the entries installed in this package's own
	// node_modules (for a link, in the target's).
	Dependencies map[string]V1Dep `json:"dependencies"`
}

// Parse parses a package-lock.json or npm-shrinkwrap.json document.
func Parse(data []byte) (*Lock, error) {
	return ParseFile("package-lock.json", data)
}

// ParseFile parses the package-lock.json or npm-shrinkwrap.json named
// file; its errors name file, with the line and column of a syntax error.
func ParseFile(file string, data []byte) (*Lock, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	// Fastest path: the shape npm writes, scanned without building what is
	// not kept.
	if version, packages, deps, ok := scanLock(data); ok {
		l := &Lock{Packages: packages}
		if err := l.setVersion(version); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		l.loadV1(deps)
		return l, nil
	}
	// Anything else (an escaped key, a null entry, a field of another
	// type, a repeated or differently cased key, ...) is decoded with the
	// object semantics of JSON.parse, which npm reads the file with: keys
	// match exactly and a repeated key's last value wins. (A struct
	// decoded by encoding/json would read "Packages" as "packages" and
	// merge a repeated "packages" into one map.) An entry of the wrong
	// shape is skipped.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field == "" {
			return nil, &jsonfile.Error{File: file, Msg: "a package lock must be a JSON object", Err: err}
		}
		return nil, jsonfile.Explain(file, data, err)
	}
	l := &Lock{}
	if err := l.setVersion(top["lockfileVersion"]); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if raw := top["packages"]; len(raw) > 0 && string(raw) != "null" {
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			// A member of the wrong type ("packages": []) is named, with
			// its place, by Explain, from the whole document's decode.
			var shape struct {
				Packages map[string]json.RawMessage `json:"packages"`
			}
			if derr := json.Unmarshal(data, &shape); derr != nil {
				err = derr
			}
			return nil, jsonfile.Explain(file, data, err)
		}
		l.Packages = make(map[string]Package, len(entries))
		for k, v := range entries {
			if p, ok := exactPackage(v); ok {
				l.Packages[k] = p
			}
		}
	}
	l.loadV1(top["dependencies"])
	return l, nil
}

// exactPackage decodes one "packages" entry with exact field names, as
// JSON.parse reads it; ok is false for an entry of the wrong shape (not an
// object, or a field of another type), which is skipped.
func exactPackage(raw json.RawMessage) (Package, bool) {
	var p Package
	if string(raw) == "null" {
		return p, true // encoding/json's zero entry, as scanLock's reference decodes it
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return p, false
	}
	for _, f := range []struct {
		key string
		dst any
	}{
		{"name", &p.Name}, {"version", &p.Version}, {"resolved", &p.Resolved}, {"integrity", &p.Integrity},
		{"link", &p.Link}, {"dev", &p.Dev}, {"optional", &p.Optional},
	} {
		if v, ok := fields[f.key]; ok && json.Unmarshal(v, f.dst) != nil {
			return Package{}, false
		}
	}
	return p, true
}

// loadV1 reads the v1 tree when the file has no "packages" map, and
// derives that map from it. The tree is read with the object semantics of
// JSON.parse, as npm reads it (scanV1): keys match exactly and a repeated
// key's last value wins.
func (l *Lock) loadV1(raw json.RawMessage) {
	if l.Packages != nil || len(raw) == 0 {
		return
	}
	deps, ok := scanV1(raw)
	if !ok {
		return // not an object: no tree
	}
	l.Dependencies = deps
	l.Packages = v1Packages(deps)
}

// v1Packages turns a v1 tree into the v2 "packages" map, as npm migrates
// it. Only the locations Node's resolution can reach from a workspace
// member are recorded: the root's node_modules and the node_modules of
// every link target. Entries nested under a non-link package are walked
// only for the links they hold.
func v1Packages(deps map[string]V1Dep) map[string]Package {
	pk := make(map[string]Package, len(deps)) // the top of the tree, at least
	var walk func(container string, record bool, deps map[string]V1Dep)
	walk = func(container string, record bool, deps map[string]V1Dep) {
		for name, d := range deps {
			loc := ""
			if record {
				loc = path.Join(container, "node_modules", name)
			}
			if target, ok := v1LinkTarget(d.Version); ok {
				if record {
					pk[loc] = Package{Link: true, Resolved: target}
				}
				if _, ok := pk[target]; !ok {
					pk[target] = Package{}
				}
				walk(target, true, d.Dependencies)
				continue
			}
			if record {
				pk[loc] = v1Package(name, d)
			}
			walk("", false, d.Dependencies)
		}
	}
	walk("", true, deps)
	return pk
}

// v1LinkTarget reports whether a v1 version is a "file:" directory (a
// link, as npm records workspace members and file: directories) and its
// target relative to the lockfile's directory. A "file:" tarball is not a
// link.
func v1LinkTarget(version string) (string, bool) {
	rest, ok := strings.CutPrefix(version, "file:")
	if !ok {
		return "", false
	}
	low := strings.ToLower(rest)
	if strings.HasSuffix(low, ".tgz") || strings.HasSuffix(low, ".tar.gz") || strings.HasSuffix(low, ".tar") {
		return "", false
	}
	return lockfile.JoinRel("", rest), true
}

// v1Package is the "packages" entry of one non-link v1 entry.
func v1Package(name string, d V1Dep) Package {
	r := fromV1(name, d)
	p := Package{Version: r.Version, Resolved: d.Resolved, Integrity: d.Integrity, Dev: d.Dev, Optional: d.Optional}
	if r.Name != name {
		p.Name = r.Name
	}
	return p
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
