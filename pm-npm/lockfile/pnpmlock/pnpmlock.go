// Package pnpmlock reads pnpm-lock.yaml: lockfileVersion 5.x (a YAML float,
// "specifiers" beside name → version maps, package keys "/name/1.2.3"), 6.0
// ("name: {specifier, version}", keys "/name@1.2.3") and 9.0 (always
// "importers", keys "name@1.2.3"), including the multi-document files newer
// pnpm writes, where a first document locks pnpm itself and the project's
// lock follows a "---".
package pnpmlock

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

// Dep is what an importer records for one direct dependency.
type Dep struct {
	// Specifier is the declared spec (from v5's "specifiers" or v6+'s
	// "specifier").
	Specifier string
	// Version is the raw locked reference: "1.2.3", "1.2.3_peer@1" (5.x),
	// "1.2.3(peer@1)" (6.0+), an alias "/real/1.2.3", "/real@1.2.3" or
	// "real@1.2.3", or "link:../dir", "file:...".
	Version string
}

// Importer is one project of the lock: "." for the root, else the member's
// relative path.
type Importer struct {
	Dependencies         map[string]Dep
	DevDependencies      map[string]Dep
	OptionalDependencies map[string]Dep
}

// Lock is a parsed pnpm-lock.yaml.
type Lock struct {
	// LockfileVersion is the declared version as written ("5.4", "6.0", "9.0").
	LockfileVersion string
	// Importers maps cleaned importer paths ("" for the root) to their deps.
	Importers map[string]*Importer
	// Packages holds the "packages" entries that say what they are beyond
	// their key — git, tarball and "file:" packages, which record a name
	// and version, or a directory — by key as written.
	Packages map[string]Package
}

// Package is what a "packages" entry of a non-registry package records.
type Package struct {
	Name    string // the package's name, when recorded
	Version string // the package's version, when recorded
	// Directory is the "file:" directory (resolution type "directory"),
	// slash-separated and relative to the lockfile's directory; else "".
	Directory string
}

// Parse parses a pnpm-lock.yaml, using the last YAML document that declares a
// lockfileVersion.
func Parse(data []byte) (*Lock, error) {
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var chosen *yaml.Node
	for {
		var doc yaml.Node
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("invalid pnpm-lock.yaml: %w", err)
		}
		if len(doc.Content) == 0 {
			continue
		}
		m := doc.Content[0]
		if m.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("invalid pnpm-lock.yaml: a document is not a mapping")
		}
		if member(m, "lockfileVersion") != nil {
			chosen = m
		}
	}
	if chosen == nil {
		return nil, fmt.Errorf("invalid pnpm-lock.yaml: no lockfileVersion")
	}
	v := member(chosen, "lockfileVersion")
	if v.Kind != yaml.ScalarNode {
		return nil, fmt.Errorf("invalid pnpm-lock.yaml: lockfileVersion is not a scalar")
	}
	l := &Lock{LockfileVersion: v.Value, Importers: map[string]*Importer{}, Packages: map[string]Package{}}
	if pk := member(chosen, "packages"); pk != nil && pk.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(pk.Content); i += 2 {
			if p, ok := packageInfo(pk.Content[i+1]); ok {
				l.Packages[pk.Content[i].Value] = p
			}
		}
	}
	if imps := member(chosen, "importers"); imps != nil && imps.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(imps.Content); i += 2 {
			l.Importers[lockfile.CleanImporter(imps.Content[i].Value)] = importer(imps.Content[i+1])
		}
	} else {
		l.Importers[""] = importer(chosen)
	}
	return l, nil
}

// importer decodes the dependency maps of an importer (or of a 5.x/6.0 root
// document, which has the same members at the top).
func importer(m *yaml.Node) *Importer {
	specs := map[string]string{}
	if s := member(m, "specifiers"); s != nil && s.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(s.Content); i += 2 {
			specs[s.Content[i].Value] = s.Content[i+1].Value
		}
	}
	get := func(key string) map[string]Dep {
		n := member(m, key)
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		out := make(map[string]Dep, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			name, val := n.Content[i].Value, n.Content[i+1]
			switch val.Kind {
			case yaml.ScalarNode: // 5.x: name: version
				out[name] = Dep{Specifier: specs[name], Version: val.Value}
			case yaml.MappingNode: // 6.0+: name: {specifier, version}
				d := Dep{Specifier: specs[name]}
				if s := member(val, "specifier"); s != nil {
					d.Specifier = s.Value
				}
				if s := member(val, "version"); s != nil {
					d.Version = s.Value
				}
				out[name] = d
			}
		}
		return out
	}
	return &Importer{
		Dependencies:         get("dependencies"),
		DevDependencies:      get("devDependencies"),
		OptionalDependencies: get("optionalDependencies"),
	}
}

// packageInfo reads a "packages" entry; ok is false for an entry that
// records neither a version nor a directory (a registry package, whose key
// says it all).
func packageInfo(n *yaml.Node) (Package, bool) {
	var p Package
	if v := member(n, "name"); v != nil && v.Kind == yaml.ScalarNode {
		p.Name = v.Value
	}
	if v := member(n, "version"); v != nil && v.Kind == yaml.ScalarNode {
		p.Version = v.Value
	}
	if res := member(n, "resolution"); res != nil {
		if t := member(res, "type"); t != nil && t.Value == "directory" {
			if d := member(res, "directory"); d != nil && d.Kind == yaml.ScalarNode {
				p.Directory = lockfile.JoinRel("", d.Value)
			}
		}
	}
	return p, p.Version != "" || p.Directory != ""
}

// member returns the value of key in mapping m, or nil.
func member(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// Resolve implements lockfile.Resolver.
func (l *Lock) Resolve(importer, name, spec string) (lockfile.Resolution, bool) {
	importer = lockfile.CleanImporter(importer)
	imp, ok := l.Importers[importer]
	if !ok {
		return lockfile.Resolution{}, false
	}
	for _, m := range []map[string]Dep{imp.Dependencies, imp.DevDependencies, imp.OptionalDependencies} {
		if d, ok := m[name]; ok {
			r := ParseVersion(l.LockfileVersion, importer, name, d.Version)
			if r.Link == "" && strings.ContainsAny(r.Version, ":/") {
				r = l.fromPackages(name, d.Version, r)
			}
			return r, true
		}
	}
	return lockfile.Resolution{}, false
}

// fromPackages completes the resolution of a git, tarball or "file:"
// reference from its "packages" entry, which records the name and version
// (or, for a directory, where it is). The entry's key is the reference
// itself (5.x, 6.0, with or without a leading "/") or "name@reference"
// (9.0, where the importer may already write "name@reference").
func (l *Lock) fromPackages(name, ref string, r lockfile.Resolution) lockfile.Resolution {
	cands := []string{ref, "/" + ref, name + "@" + ref}
	if i := strings.Index(ref, "("); i > 0 && !isV5(l.LockfileVersion) {
		bare := ref[:i]
		cands = append(cands, bare, "/"+bare, name+"@"+bare)
	}
	for _, k := range cands {
		p, ok := l.Packages[k]
		if !ok {
			continue
		}
		if p.Directory != "" {
			return lockfile.Resolution{Name: name, Link: p.Directory}
		}
		out := lockfile.Resolution{Name: r.Name, Version: p.Version}
		if p.Name != "" {
			out.Name = p.Name
		}
		return out
	}
	return r
}

// ParseVersion interprets a locked reference of the importer's dependency
// name. lockfileVersion selects between 5.x's underscore peer suffixes and
// slash-separated alias paths and the later formats.
func ParseVersion(lockfileVersion, importer, name, ref string) lockfile.Resolution {
	switch {
	case strings.HasPrefix(ref, "link:"):
		return lockfile.Resolution{Name: name, Version: ref, Link: lockfile.JoinRel(importer, ref[len("link:"):])}
	case strings.HasPrefix(ref, "file:"):
		return lockfile.Resolution{Name: name, Version: ref}
	}
	if isV5(lockfileVersion) {
		if p, ok := strings.CutPrefix(ref, "/"); ok {
			// "/real/1.2.3_peer@1": peer names in the suffix use "+" for "/".
			if i := strings.LastIndex(p, "/"); i > 0 {
				return lockfile.Resolution{Name: p[:i], Version: stripUnderscorePeers(p[i+1:])}
			}
		}
		return lockfile.Resolution{Name: name, Version: stripUnderscorePeers(ref)}
	}
	if i := strings.Index(ref, "("); i >= 0 {
		ref = ref[:i] // "1.2.3(react@18.0.0)"
	}
	if n, v, ok := splitAt(strings.TrimPrefix(ref, "/")); ok {
		// Alias: 6.0 "/real@1.2.3", 9.0 "real@1.2.3".
		return lockfile.Resolution{Name: n, Version: v}
	}
	return lockfile.Resolution{Name: name, Version: ref}
}

// isV5 reports whether a lockfileVersion is of the 5.x family (or older).
func isV5(v string) bool {
	major, _, _ := strings.Cut(strings.Trim(v, "'\""), ".")
	return len(major) == 1 && major[0] >= '0' && major[0] <= '5'
}

// splitAt splits "name@version" (name possibly scoped); ok is false when
// there is no "@" after the name.
func splitAt(s string) (string, string, bool) {
	start := 0
	if strings.HasPrefix(s, "@") {
		start = 1
	}
	i := strings.Index(s[start:], "@")
	if i <= 0 {
		return "", "", false
	}
	return s[:start+i], s[start+i+1:], true
}

// stripUnderscorePeers removes 5.x's "_peer@1+other@2" suffix. A semver
// version has no "_", so everything from the first one is the suffix.
func stripUnderscorePeers(v string) string {
	if i := strings.Index(v, "_"); i > 0 {
		return v[:i]
	}
	return v
}
