// Package cargolock reads Cargo.lock files of every format cargo has written:
// version 1 (no version key, checksums in [metadata], dependency strings
// always "name version (source)"), version 2 (inline checksums, compact
// dependency strings), version 3 and version 4 (an explicit top-level
// version key).
//
// The reader resolves each package's dependency strings to the locked
// packages they name, so callers can walk the resolved graph without knowing
// the encoding rules.
package cargolock

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// MaxVersion is the newest lockfile version this package understands.
const MaxVersion = 4

// Lockfile is a parsed Cargo.lock.
type Lockfile struct {
	// Version is the lockfile format version: 1 to 4.
	Version int
	// Packages are the locked packages in file order.
	Packages []Package

	byName map[string][]int
}

// Package is one [[package]] entry.
type Package struct {
	Name    string
	Version string
	// Source is the package's source URL, e.g.
	// "registry+https://github.com/rust-lang/crates.io-index"; empty for path
	// packages (workspace members and path dependencies).
	Source string
	// Checksum is the sha256 of the .crate, for registry packages; for a
	// version 1 lockfile it comes from the [metadata] table.
	Checksum string
	// Dependencies are the package's dependency references as written.
	Dependencies []Ref
}

// Ref is a dependency string: "name", "name version" or
// "name version (source)". Version and Source are empty when not written.
type Ref struct {
	Name    string
	Version string
	Source  string
}

// String renders the reference in cargo's encoding.
func (r Ref) String() string {
	s := r.Name
	if r.Version != "" {
		s += " " + r.Version
	}
	if r.Source != "" {
		s += " (" + r.Source + ")"
	}
	return s
}

// ParseRef parses a dependency string.
func ParseRef(s string) (Ref, error) {
	var r Ref
	rest := s
	if i := strings.IndexByte(rest, '('); i >= 0 {
		if !strings.HasSuffix(rest, ")") {
			return r, fmt.Errorf("dependency %q: unterminated source in parentheses", s)
		}
		r.Source = rest[i+1 : len(rest)-1]
		if r.Source == "" {
			return r, fmt.Errorf("dependency %q: empty source", s)
		}
		rest = strings.TrimRight(rest[:i], " ")
	}
	fields := strings.Split(rest, " ")
	switch len(fields) {
	case 1:
		r.Name = fields[0]
	case 2:
		r.Name, r.Version = fields[0], fields[1]
	default:
		return r, fmt.Errorf("dependency %q: want \"name\", \"name version\" or \"name version (source)\"", s)
	}
	if r.Name == "" {
		return r, fmt.Errorf("dependency %q: empty name", s)
	}
	if r.Source != "" && r.Version == "" {
		return r, fmt.Errorf("dependency %q: source without version", s)
	}
	return r, nil
}

// rawLock mirrors the TOML layout.
type rawLock struct {
	rawHead
	Package []rawPackage `toml:"package"`
}

// rawHead is a Cargo.lock without its [[package]] tables.
type rawHead struct {
	Version  *int              `toml:"version"`
	Root     *rawPackage       `toml:"root"` // the root package of very old version 1 files
	Metadata map[string]string `toml:"metadata"`
}

type rawPackage struct {
	Name         string   `toml:"name"`
	Version      string   `toml:"version"`
	Source       string   `toml:"source"`
	Checksum     string   `toml:"checksum"`
	Dependencies []string `toml:"dependencies"`
}

// ReadFile reads and parses the lockfile at path, opened with
// pkgfile.OpenUserFile: links are followed, and a FIFO, a device or a
// file over pkgfile.MaxLockfile is an error naming it. It reads as Read
// does, never holding the whole file when cargo wrote it.
func ReadFile(path string) (*Lockfile, error) {
	f, size, err := pkgfile.OpenUserFile(path, pkgfile.MaxLockfile)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(path, io.NewSectionReader(f, 0, size))
}

// Read parses the lockfile read from r, as Parse parses it (name is used
// in error messages), with the same result and the same errors, but
// without holding the whole document, or every [[package]] table decoded,
// at once: each table is read, decoded and converted in turn, which at
// 50,000 locked packages holds about 20 MB less than Parse. That is the
// way cargo writes the file, with a version key (version 3 and later);
// anything else (an older file, a layout of its own, a problem to report
// with its line) is read again whole and given to Parse.
func Read(name string, r io.ReadSeeker) (*Lockfile, error) {
	var head rawHead
	lf := newLockfile(0)
	ok := true
	whole, err := tomlfile.ReadTablesFunc(r, "package", &head, func(rp rawPackage) {
		if !ok {
			return
		}
		p, msg, _ := newPackage(len(lf.Packages), rp)
		if ok = msg == ""; ok {
			lf.add(p)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if whole == nil && ok && head.Root == nil && head.Version != nil && *head.Version >= 1 && *head.Version <= MaxVersion {
		lf.Version = *head.Version
		lf.checksumsFrom(head.Metadata)
		return lf, nil
	}
	if whole == nil {
		if whole, err = readAgain(r); err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
	}
	return Parse(name, whole)
}

// readAgain reads r whole from its start.
func readAgain(r io.ReadSeeker) ([]byte, error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, err
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	data := make([]byte, size)
	_, err = io.ReadFull(r, data)
	return data, err
}

// newLockfile returns an empty Lockfile with room for n packages.
func newLockfile(n int) *Lockfile {
	return &Lockfile{Packages: make([]Package, 0, n), byName: make(map[string][]int, n)}
}

// add appends p to lf's packages.
func (lf *Lockfile) add(p Package) {
	lf.byName[p.Name] = append(lf.byName[p.Name], len(lf.Packages))
	lf.Packages = append(lf.Packages, p)
}

// newPackage converts rp, the i-th package of the file (from 0), and
// checks it; on a problem it returns its message and the path of the
// value it is at below the package.
func newPackage(i int, rp rawPackage) (Package, string, []string) {
	if rp.Name == "" {
		return Package{}, fmt.Sprintf("[[package]] #%d: missing name", i+1), nil
	}
	if rp.Version == "" {
		return Package{}, fmt.Sprintf("[[package]] #%d (%s): missing version", i+1, rp.Name), nil
	}
	p := Package{Name: rp.Name, Version: rp.Version, Source: rp.Source, Checksum: rp.Checksum}
	if len(rp.Dependencies) > 0 {
		p.Dependencies = make([]Ref, 0, len(rp.Dependencies))
	}
	for j, d := range rp.Dependencies {
		r, err := ParseRef(d)
		if err != nil {
			return Package{}, fmt.Sprintf("package %s %s: %v", rp.Name, rp.Version, err), []string{"dependencies", strconv.Itoa(j)}
		}
		p.Dependencies = append(p.Dependencies, r)
	}
	return p, "", nil
}

// checksumsFrom gives the registry packages without an inline checksum
// the one a version 1 lockfile keeps in its [metadata] table.
func (lf *Lockfile) checksumsFrom(metadata map[string]string) {
	if len(metadata) == 0 {
		return
	}
	for i := range lf.Packages {
		p := &lf.Packages[i]
		if p.Checksum != "" || p.Source == "" {
			continue
		}
		key := "checksum " + p.Name + " " + p.Version + " (" + p.Source + ")"
		if sum, ok := metadata[key]; ok && sum != "<none>" {
			p.Checksum = sum
		}
	}
}

// Parse parses lockfile data; name is used in error messages, which are
// *tomlfile.Error (tomlfile.Errors for several values of the wrong type).
func Parse(name string, data []byte) (*Lockfile, error) {
	var raw rawLock
	// One [[package]] table at a time, the way cargo writes the file: the
	// decoder does not keep track of every key of every table, nor grow the
	// list table by table. Anything else at once.
	if pkgs, ok := tomlfile.UnmarshalTables[rawPackage](data, "package", &raw.rawHead); ok {
		raw.Package = pkgs
	} else if err := tomlfile.Unmarshal(name, data, &raw); err != nil {
		return nil, err
	}
	var pos *tomlfile.Positions // indexed on the first problem
	at := func(msg string, path ...string) *tomlfile.Error {
		if pos == nil {
			pos = tomlfile.Index(data)
		}
		e := tomlfile.At(name, pos, msg, path...)
		e.Key = ""
		return e
	}
	lf := newLockfile(len(raw.Package))
	if raw.Version != nil {
		lf.Version = *raw.Version
		if lf.Version < 1 || lf.Version > MaxVersion {
			return nil, at(fmt.Sprintf("unsupported lockfile version %d (this reader knows 1 to %d)", lf.Version, MaxVersion), "version")
		}
	}
	// path locates the i-th package of raw.Package (the [root] table first).
	path := func(i int, rest ...string) []string {
		if raw.Root != nil {
			if i == 0 {
				return append([]string{"root"}, rest...)
			}
			i--
		}
		return append([]string{"package", strconv.Itoa(i)}, rest...)
	}
	if raw.Root != nil {
		raw.Package = append([]rawPackage{*raw.Root}, raw.Package...)
	}
	for i, rp := range raw.Package {
		p, msg, sub := newPackage(i, rp)
		if msg != "" {
			return nil, at(msg, path(i, sub...)...)
		}
		lf.add(p)
		if raw.Version != nil {
			// Parsed into p, and not needed to guess the version: the
			// strings can be collected.
			raw.Package[i].Dependencies = nil
		}
	}
	if lf.Version == 0 {
		lf.Version = guessVersion(&raw)
	}
	lf.checksumsFrom(raw.Metadata)
	return lf, nil
}

// guessVersion tells version 1 from version 2 in a lockfile without a
// version key: version 1 keeps checksums in [metadata] and writes every
// dependency in the long form; version 2 has inline checksums.
func guessVersion(raw *rawLock) int {
	for k := range raw.Metadata {
		if strings.HasPrefix(k, "checksum ") {
			return 1
		}
	}
	for _, p := range raw.Package {
		if p.Checksum != "" {
			return 2
		}
		for _, d := range p.Dependencies {
			if !strings.Contains(d, " ") {
				return 2
			}
		}
	}
	// Only path packages with fully spelled references: both encodings agree.
	return 1
}

// ByName returns the locked packages named name, in file order.
func (lf *Lockfile) ByName(name string) []*Package {
	idx := lf.byName[name]
	out := make([]*Package, 0, len(idx))
	for _, i := range idx {
		out = append(out, &lf.Packages[i])
	}
	return out
}

// Find returns the locked package with the given name and version (and
// source, when source is not empty), or nil.
func (lf *Lockfile) Find(name, version, source string) *Package {
	for _, i := range lf.byName[name] {
		p := &lf.Packages[i]
		if p.Version == version && (source == "" || SourceMatches(source, p.Source)) {
			return p
		}
	}
	return nil
}

// Resolve returns the locked package a dependency reference names, or an
// error when it names none or is ambiguous.
func (lf *Lockfile) Resolve(r Ref) (*Package, error) {
	var found *Package
	for _, i := range lf.byName[r.Name] {
		p := &lf.Packages[i]
		if r.Version != "" && p.Version != r.Version {
			continue
		}
		if r.Source != "" && !SourceMatches(r.Source, p.Source) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("dependency %q is ambiguous: several locked packages match", r)
		}
		found = p
	}
	if found == nil {
		return nil, fmt.Errorf("dependency %q names no locked package", r)
	}
	return found, nil
}

// SourceMatches reports whether a source as written in a dependency
// reference names a package's source. Cargo writes a package's source with
// its precise part (a git source's "#commit"), but strips that part when it
// encodes a reference to the package, in every lockfile version; so a
// reference without a fragment names any package whose source is the same
// up to its fragment.
func SourceMatches(ref, pkg string) bool {
	if ref == pkg {
		return true
	}
	if strings.IndexByte(ref, '#') >= 0 {
		return false
	}
	base, _, ok := strings.Cut(pkg, "#")
	return ok && base == ref
}
