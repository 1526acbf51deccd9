package cargopm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargotoml"
	"github.com/symposium-dev/symposium-pm/pm-cargo/lockfile/cargolock"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// snapshot is what list_deps and workspace answer, and what the persistent
// cache stores.
type snapshot struct {
	// Found is false when the directory is in no cargo package at all.
	Found   bool                       `json:"found"`
	Root    string                     `json:"root,omitempty"`
	Members []protocol.WorkspaceMember `json:"members,omitempty"`
	Deps    []protocol.PackageID       `json:"deps"`
	// Paths maps "name@version" of each path dependency that is not a
	// member, and of each dependency a [patch] or [replace] entry leads to
	// a path crate, to its directory.
	Paths    map[string]string `json:"paths,omitempty"`
	Warnings []warning         `json:"warnings,omitempty"`
	// Err is set when the workspace cannot be listed at all (a malformed
	// root manifest or lockfile); it is cached like an answer, so the same
	// broken inputs fail fast.
	Err string `json:"err,omitempty"`
}

// cacheKey versions the persisted snapshot's layout and meaning; the
// workspace directory follows it.
const cacheKey = "list_deps 6\x00"

// encode returns s as persisted, in three parts, so that a cache hit for
// list_deps decodes only what list_deps answers with:
//
//	{"found":…,"warnings":[…],"err":…}       one JSON line
//	{"root":…,"members":[…],"paths":{…}}     one JSON line, decoded only when wanted
//	<name> <version>                         one line per dependency
//
// It reports false when the dependencies do not fit that form (see
// depcache.AppendDeps); such a snapshot is not persisted.
func (s *snapshot) encode() ([]byte, bool) {
	head, err1 := json.Marshal(struct {
		Found    bool      `json:"found"`
		Warnings []warning `json:"warnings,omitempty"`
		Err      string    `json:"err,omitempty"`
	}{s.Found, s.Warnings, s.Err})
	body, err2 := json.Marshal(struct {
		Root    string                     `json:"root,omitempty"`
		Members []protocol.WorkspaceMember `json:"members,omitempty"`
		Paths   map[string]string          `json:"paths,omitempty"`
	}{s.Root, s.Members, s.Paths})
	if err1 != nil || err2 != nil {
		return nil, false
	}
	b := make([]byte, 0, len(head)+len(body)+2+len(s.Deps)*24)
	b = append(append(append(append(b, head...), '\n'), body...), '\n')
	return depcache.AppendDeps(b, s.Deps)
}

// foundHead is the head line of a snapshot of a workspace found, with
// neither warnings nor an error: the common case, recognised without
// decoding it.
var foundHead = []byte(`{"found":true}`)

// splitSnapshot cuts what encode wrote into its head line, its layout line
// and its dependency lines; false when it is truncated.
func splitSnapshot(data []byte) (head, layout, deps []byte, ok bool) {
	head, rest, ok1 := bytes.Cut(data, []byte{'\n'})
	layout, deps, ok2 := bytes.Cut(rest, []byte{'\n'})
	return head, layout, deps, ok1 && ok2
}

// snapshotParts selects the parts of a persisted snapshot that are
// decoded: a caller that needs only the layout skips parsing one line per
// dependency, and list_deps skips the layout.
type snapshotParts uint8

const (
	// depsPart is Deps.
	depsPart snapshotParts = 1 << iota
	// layoutPart is Root, Members and Paths.
	layoutPart
)

// decodeSnapshot parses what encode wrote, the parts selected: the others
// are left empty.
func decodeSnapshot(data []byte, parts snapshotParts) (*snapshot, error) {
	head, body, rest, ok := splitSnapshot(data)
	if !ok {
		return nil, errors.New("truncated snapshot")
	}
	s := &snapshot{}
	if !bytes.Equal(head, foundHead) {
		if err := json.Unmarshal(head, s); err != nil {
			return nil, err
		}
	} else {
		s.Found = true
	}
	if parts&layoutPart != 0 {
		if err := json.Unmarshal(body, s); err != nil {
			return nil, err
		}
	}
	if parts&depsPart != 0 {
		deps, err := depcache.ParseDeps(rest, Name)
		if err != nil {
			return nil, err
		}
		s.Deps = deps
	}
	return s, nil
}

// ListDeps returns the direct dependencies of every workspace member,
// without running cargo or touching the network.
func (p *PM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	s, err := p.snapshot(ctx, depsPart)
	if err != nil {
		return nil, err
	}
	return s.Deps, nil
}

// Workspace reports the workspace root and its members.
func (p *PM) Workspace(ctx context.Context) (protocol.WorkspaceResult, error) {
	s, err := p.snapshot(ctx, layoutPart)
	if err != nil {
		return protocol.WorkspaceResult{}, err
	}
	if !s.Found {
		return protocol.WorkspaceResult{Root: p.session().Workspace, Members: []protocol.WorkspaceMember{}}, nil
	}
	members := s.Members
	if members == nil {
		members = []protocol.WorkspaceMember{}
	}
	return protocol.WorkspaceResult{Root: s.Root, Members: members}, nil
}

// snapshotCache returns where the workspace's snapshot is persisted (nil,
// which stores nothing, without a cache directory) and its key there.
func (p *PM) snapshotCache() (*depcache.Cache, string) {
	sess := p.session()
	if sess.CacheDir == "" {
		return nil, ""
	}
	return depcache.New(filepath.Join(sess.CacheDir, "cargo", "deps")), cacheKey + sess.Workspace
}

// snapshot returns the workspace's snapshot, from the persisted cache when
// its inputs are unchanged. Only the parts selected are sure to be there:
// read from the cache, the others are left empty.
func (p *PM) snapshot(ctx context.Context, parts snapshotParts) (*snapshot, error) {
	sess := p.session()
	cache, key := p.snapshotCache()
	if raw, ok := p.snapshotRead.Load(cache, key); ok {
		if s, err := decodeSnapshot(raw, parts); err == nil {
			return p.finish(ctx, s)
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var rec depcache.Recorder
	s := computeSnapshot(sess.Workspace, &rec)
	if data, ok := s.encode(); ok {
		if err := cache.Store(key, rec.Stamps(), data); errors.Is(err, depcache.ErrRecent) {
			sess.Logger.Debug("cargo: dependency cache not persisted", "err", err)
		} else if err != nil {
			sess.Logger.Warn("cargo: cannot persist the dependency cache", "err", err)
		}
		p.snapshotRead.Forget()
	}
	return p.finish(ctx, s)
}

// finish logs the snapshot's warnings, hands them to the host as
// diagnostics of the request ctx belongs to (a cached snapshot repeats
// them), and turns its error into one.
func (p *PM) finish(ctx context.Context, s *snapshot) (*snapshot, error) {
	for _, w := range s.Warnings {
		p.warn(ctx, pmserver.Diagnostic{Message: w.Message, File: w.File, Line: w.Line}, "cargo: "+w.Message)
	}
	if s.Err != "" {
		return nil, errors.New(s.Err)
	}
	if s.Deps == nil {
		s.Deps = []protocol.PackageID{}
	}
	return s, nil
}

// computeSnapshot discovers the workspace at dir and its direct
// dependencies, recording every input in rec.
func computeSnapshot(dir string, rec *depcache.Recorder) *snapshot {
	ws, err := cargotoml.Load(dir, cargotoml.Options{Observe: func(path string, _ cargotoml.Observed) { rec.Observe(path) }})
	if errors.Is(err, cargotoml.ErrNoManifest) {
		return &snapshot{Deps: []protocol.PackageID{}}
	}
	if err != nil {
		return &snapshot{Err: err.Error()}
	}
	s := &snapshot{Found: true, Root: ws.Root}
	for _, e := range ws.Errors {
		s.Warnings = append(s.Warnings, warning{Message: "skipping a workspace member: " + e.Error()})
	}
	manifests := map[string]bool{}
	if ws.RootManifest != nil && ws.RootManifest.Package == nil {
		manifests[ws.RootManifest.Path] = true
	}
	for _, m := range ws.Members {
		manifests[filepath.Join(m.Dir, "Cargo.toml")] = true
	}
	for _, path := range slices.Sorted(maps.Keys(manifests)) {
		s.Warnings = append(s.Warnings, unknownTables(path)...)
	}
	s.Warnings = append(s.Warnings, pathWarnings(ws)...)
	for _, m := range ws.Members {
		s.Members = append(s.Members, protocol.WorkspaceMember{Name: m.Name, Version: m.Version, Dir: m.Dir})
	}
	var lf *cargolock.Lockfile
	if f, size, err := rec.OpenFile(ws.Lockfile, pkgfile.MaxLockfile); err == nil {
		// Read a table at a time: a lockfile of 50,000 packages is 13 MB.
		lf, err = cargolock.Read(ws.Lockfile, io.NewSectionReader(f, 0, size))
		f.Close()
		if err != nil {
			s.Err = err.Error()
			return s
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		s.Err = err.Error() // a *pkgfile.Error: it names the file
		return s
	} else {
		s.Warnings = append(s.Warnings, lockfileWarning(ws)...)
	}
	s.Deps, s.Paths = directDeps(ws, lf)
	return s
}

// DirectDeps returns the sorted, deduplicated direct dependencies of the
// workspace's members, with exact versions from the lockfile lf (nil when
// there is none) and "*" for any dependency it does not lock. Members are
// never reported as dependencies of each other.
func DirectDeps(ws *cargotoml.Workspace, lf *cargolock.Lockfile) []protocol.PackageID {
	deps, _ := directDeps(ws, lf)
	return deps
}

// directDeps is DirectDeps that also reports the directory of every path
// dependency that is not a member, keyed "name@version".
func directDeps(ws *cargotoml.Workspace, lf *cargolock.Lockfile) ([]protocol.PackageID, map[string]string) {
	paths := map[string]string{}
	memberDir := make(map[string]bool, len(ws.Members))
	memberPkg := make(map[[2]string]bool, len(ws.Members))
	for _, m := range ws.Members {
		memberDir[m.Dir] = true
		memberPkg[[2]string{m.Name, m.Version}] = true
	}
	isMember := func(lp *cargolock.Package) bool {
		return lp.Source == "" && memberPkg[[2]string{lp.Name, lp.Version}]
	}
	out := make([]protocol.PackageID, 0, 64)
	for _, m := range ws.Members {
		var locked []*cargolock.Package // the member's resolved dependencies
		var self *cargolock.Package
		if lf != nil {
			for _, lp := range lf.ByName(m.Name) {
				if lp.Source == "" && lp.Version == m.Version {
					self = lp
					break
				}
			}
			if self != nil {
				for _, r := range self.Dependencies {
					if lp, err := lf.Resolve(r); err == nil {
						locked = append(locked, lp)
					}
				}
			}
		}
		for _, d := range m.Deps {
			if d.Path != "" && memberDir[filepath.Clean(d.Path)] {
				continue
			}
			var pool []*cargolock.Package
			switch {
			case self != nil:
				pool = locked
			case lf != nil:
				pool = lf.ByName(d.Name) // a member cargo has not locked yet
			}
			id := protocol.PackageID{PM: Name, Name: d.Name, Version: protocol.AnyVersion}
			if pkg, ok := pathPackage(ws, d); ok && lf != nil {
				// cargo reads a path dependency's manifest every time: its
				// version is the one written there now, whatever
				// Cargo.lock recorded before it was bumped.
				if memberPkg[[2]string{pkg.Name, pkg.Version}] {
					continue
				}
				id.Version = pkg.Version
				paths[id.Name+"@"+id.Version] = filepath.Clean(d.Path)
				out = append(out, id)
				continue
			}
			dir := d.Path
			if lp := pick(pool, d); lp != nil {
				if isMember(lp) {
					continue
				}
				id.Name, id.Version = lp.Name, lp.Version
				if d.Path == "" {
					if version, rdir, ok := redirect(ws, d, lp); ok {
						id.Version, dir = version, rdir
					}
				}
			}
			if dir != "" {
				paths[id.Name+"@"+id.Version] = filepath.Clean(dir)
			}
			out = append(out, id)
		}
	}
	return sortDeps(out), paths
}

// redirect says where cargo takes the registry or git dependency d, which
// the lockfile resolved to lp, from when one of the root manifest's
// [patch] or [replace] entries leads it to a path crate: the version
// cargo reports and that crate's directory. cargo reads a patch's
// Cargo.toml every time, as a path dependency's:
//
//   - lp is a path package (Cargo.lock recorded the patch): the patch
//     crate's version now, when d's requirement accepts it; when none
//     does, the patch is unused and cargo resolves d from its source
//     again, at a version no lockfile records ("*", no directory);
//   - lp is from the source: a patch at that very version is used (cargo
//     keeps a locked version, and leaves a patch at another one unused);
//   - a [replace] entry naming lp's name and version is used; its crate
//     declares that version, or cargo fails (a warning from pathWarnings).
//
// Only patches whose table applies to d's source count, unless the
// lockfile's path package shows a patch of a table not recognized led d
// there. ok is false when no entry leads d to a path crate.
func redirect(ws *cargotoml.Workspace, d cargotoml.Dependency, lp *cargolock.Package) (version, dir string, ok bool) {
	var patches, others []cargotoml.RedirectedPackage
	for _, r := range ws.Redirects {
		switch {
		case r.Package.Name != lp.Name:
		case r.Replace:
			if lp.Source != "" && r.Version == lp.Version {
				return lp.Version, r.Dir, true
			}
		case patchApplies(r.Source, d):
			patches = append(patches, r)
		default:
			others = append(others, r)
		}
	}
	if len(patches) == 0 && lp.Source == "" {
		// Only a patch or a replacement locks a registry or git
		// dependency at a path package: one whose table is not
		// recognized (a registry named by its URL) led it there.
		patches = others
	}
	if len(patches) == 0 {
		return "", "", false
	}
	if lp.Source != "" {
		for _, r := range patches {
			if r.Package.Version == lp.Version {
				return lp.Version, r.Dir, true
			}
		}
		return "", "", false
	}
	var best *cargotoml.RedirectedPackage
	for i, r := range patches {
		if d.Req != "" {
			if ok, err := versions.Cargo.Matches(d.Req, r.Package.Version); err != nil || !ok {
				continue
			}
		}
		if r.Package.Version == lp.Version {
			return lp.Version, r.Dir, true
		}
		if best == nil {
			best = &patches[i]
		} else if c, err := versions.Cargo.Compare(r.Package.Version, best.Package.Version); err == nil && c > 0 {
			best = &patches[i]
		}
	}
	if best == nil {
		return protocol.AnyVersion, "", true
	}
	return best.Package.Version, best.Dir, true
}

// cratesIOIndexes are the URLs by which a [patch] table may name
// crates.io instead of "crates-io".
var cratesIOIndexes = []string{"https://github.com/rust-lang/crates.io-index", "sparse+https://index.crates.io/", "https://index.crates.io/"}

// patchApplies reports whether [patch.<source>] patches d's source, as far
// as the manifests tell: crates-io (or its index URL) for a registry
// dependency without `registry`, the registry's name for one with it, the
// repository's URL for a git dependency (compared as cargo canonicalizes
// it: without a trailing "/" or ".git"). A registry named by URL is not
// recognized; redirect then falls back to the patches of other tables.
func patchApplies(source string, d cargotoml.Dependency) bool {
	switch {
	case d.Git != "":
		return canonicalGit(source) == canonicalGit(d.Git)
	case d.Registry != "":
		return source == d.Registry
	default:
		return source == "crates-io" || slices.ContainsFunc(cratesIOIndexes, func(u string) bool {
			return strings.TrimSuffix(source, "/") == strings.TrimSuffix(u, "/")
		})
	}
}

// canonicalGit is a git URL as cargo compares sources: without a trailing
// "/" or ".git", and lower-cased on github.com, whose paths ignore case.
func canonicalGit(u string) string {
	u = strings.TrimSuffix(strings.TrimSuffix(u, "/"), ".git")
	if strings.HasPrefix(strings.ToLower(u), "https://github.com/") {
		u = strings.ToLower(u)
	}
	return u
}

// pathPackage returns the package that the path dependency d's manifest
// declares, when it was read and has d's name.
func pathPackage(ws *cargotoml.Workspace, d cargotoml.Dependency) (cargotoml.PathPackage, bool) {
	if d.Path == "" {
		return cargotoml.PathPackage{}, false
	}
	pkg, ok := ws.PathPackages[filepath.Clean(d.Path)]
	return pkg, ok && pkg.Name == d.Name
}

// pick chooses the locked package that satisfies dependency d among pool:
// same name, a source of the right kind, and (when several remain) the
// newest version matching d's requirement.
func pick(pool []*cargolock.Package, d cargotoml.Dependency) *cargolock.Package {
	var cands, patched []*cargolock.Package
	for _, lp := range pool {
		if lp.Name != d.Name {
			continue
		}
		if sourceKindMatches(lp.Source, d) {
			cands = append(cands, lp)
		} else {
			patched = append(patched, lp)
		}
	}
	if len(cands) == 0 && d.Path == "" {
		// A registry or git dependency that [patch] or [replace]
		// redirected to another source (a path crate, another git
		// repository).
		cands = patched
	}
	if len(cands) <= 1 {
		if len(cands) == 1 && d.Path == "" && d.Git == "" && d.Req != "" {
			if ok, err := versions.Cargo.Matches(d.Req, cands[0].Version); err == nil && !ok {
				return nil // the lockfile is stale for this requirement
			}
		}
		if len(cands) == 1 {
			return cands[0]
		}
		return nil
	}
	var best *cargolock.Package
	for _, lp := range cands {
		if d.Req != "" && d.Path == "" && d.Git == "" {
			if ok, err := versions.Cargo.Matches(d.Req, lp.Version); err != nil || !ok {
				continue
			}
		}
		if best == nil {
			best = lp
			continue
		}
		if c, err := versions.Cargo.Compare(lp.Version, best.Version); err == nil && c > 0 {
			best = lp
		}
	}
	return best
}

// sourceKindMatches reports whether a locked source is the kind d asks
// for: path deps lock without a source, git deps with a git+ source,
// registry deps with a registry+ or sparse+ source.
func sourceKindMatches(source string, d cargotoml.Dependency) bool {
	switch {
	case d.Path != "":
		return source == ""
	case d.Git != "":
		return strings.HasPrefix(source, "git+")
	default:
		return strings.HasPrefix(source, "registry+") || strings.HasPrefix(source, "sparse+")
	}
}

// sortDeps sorts by name then version and removes duplicates.
func sortDeps(ds []protocol.PackageID) []protocol.PackageID {
	slices.SortFunc(ds, func(a, b protocol.PackageID) int {
		if c := cmp.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if a.Version == b.Version {
			return 0
		}
		if a.Version == protocol.AnyVersion || b.Version == protocol.AnyVersion {
			return cmp.Compare(a.Version, b.Version)
		}
		if c, err := versions.Cargo.Compare(a.Version, b.Version); err == nil && c != 0 {
			return c
		}
		return cmp.Compare(a.Version, b.Version)
	})
	return slices.Compact(ds)
}
