package npmpm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/packagelock"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/pnpmlock"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/yarnlock"
	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// listCacheKey names the persisted list_deps answer and versions its
// meaning; the workspace directory follows it. The value is the answer in
// depcache's compact dependency form.
const listCacheKey = "npm list_deps 7\x00"

// listCache is where the list_deps answers are persisted.
func (p *PM) listCache() *depcache.Cache {
	if p.cacheRoot == "" {
		return nil
	}
	return depcache.New(filepath.Join(p.cacheRoot, "list_deps")).Remembering(&p.verified)
}

// ListDeps implements pmserver.DepLister.
func (p *PM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	cache, key := p.listCache(), listCacheKey+p.workspace
	p.listCheck.Lock()
	raw, ok := cache.Load(key)
	p.listCheck.Unlock()
	if ok {
		if deps, err := depcache.ParseDeps(raw, Name); err == nil {
			return deps, nil
		}
	}
	var rec depcache.Recorder
	before := pmserver.DiagnosticsSent(ctx)
	deps, err := p.computeDeps(ctx, &rec)
	if err != nil {
		return nil, err
	}
	// An answer that came with diagnostics is not cached: a cached copy
	// would not repeat them.
	if data, ok := depcache.AppendDeps(nil, deps); ok && pmserver.DiagnosticsSent(ctx) == before {
		if err := cache.Store(key, rec.Stamps(), data); err != nil {
			p.log.Debug("cannot persist the list_deps cache", "err", err)
		}
		p.storeListRaw(ctx, cache, rec.Stamps(), deps)
	}
	return deps, nil
}

// member is the root project or one workspace member.
type member struct {
	dir string // slash-separated, relative to the workspace; "" for the root
	pkg *packagejson.Manifest
}

// computeDeps reads the project and returns its direct dependencies. The
// project is found as npm finds it (findProject): from inside a workspace
// member, the member's own dependencies, resolved through the workspace
// root's lockfiles and node_modules.
func (p *PM) computeDeps(ctx context.Context, rec *depcache.Recorder) ([]protocol.PackageID, error) {
	proj := findProject(rec, p.workspace)
	ws := proj.root
	rootPath := filepath.Join(ws, "package.json")
	data, err := rec.ReadFile(rootPath, pkgfile.MaxManifest)
	var rootPkg *packagejson.Manifest
	switch {
	case errors.Is(err, fs.ErrNotExist) && proj.scoped:
		// A pnpm workspace root needs no package.json of its own.
		rootPkg = &packagejson.Manifest{}
	case errors.Is(err, fs.ErrNotExist):
		return []protocol.PackageID{}, nil // not an npm project
	case err != nil:
		return nil, err // a *pkgfile.Error: it names the file
	default:
		rootPkg, err = packagejson.ParseFile(rootPath, data)
		if err != nil {
			return nil, err
		}
		if inScope(proj, "") {
			p.checkDepTables(ctx, rootPath, data)
		}
	}
	members := []member{{dir: "", pkg: rootPkg}}
	patterns := projectWorkspaces(rec, ws, rootPkg)
	if len(patterns) > 0 {
		ex := packagejson.ExpandWorkspaces(ws, patterns)
		recordExpansion(rec, ws, ex)
		for _, d := range ex.Dirs {
			if d == "" {
				continue
			}
			mp := filepath.Join(ws, filepath.FromSlash(d), "package.json")
			md, err := rec.ReadFile(mp, pkgfile.MaxManifest)
			if err != nil {
				continue
			}
			pkg, err := packagejson.ParseFile(mp, md)
			if err != nil {
				if inScope(proj, d) {
					p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("%s: %v; this workspace member is left out", mp, err), File: mp},
						"skipping workspace member with an unreadable package.json", "path", mp, "err", err)
				}
				continue
			}
			if inScope(proj, d) {
				p.checkDepTables(ctx, mp, md)
			}
			members = append(members, member{dir: d, pkg: pkg})
		}
	}
	memberDirs := map[string]bool{}
	memberNames := map[string]member{}
	for _, m := range members {
		memberDirs[m.dir] = true
		if m.pkg.Name != "" {
			memberNames[m.pkg.Name] = m
		}
	}

	resolvers, err := lockfiles(rec, ws)
	if err != nil {
		return nil, err
	}

	seen := map[protocol.PackageID]bool{}
	out := []protocol.PackageID{}
	add := func(name, version string) {
		id := protocol.PackageID{PM: Name, Name: name, Version: version}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	for _, m := range members {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !inScope(proj, m.dir) {
			continue
		}
		for _, d := range m.pkg.Deps {
			spec := packagejson.ParseSpec(d.Name, d.Spec)
			if spec.Kind == packagejson.Workspace {
				continue // a workspace member: part of the workspace, not a dependency
			}
			if d.Kind == packagejson.Peer && declaredOtherwise(m.pkg, d.Name) {
				continue // the other declaration says what is installed
			}
			r := resolveDep(rec, ws, resolvers, m.dir, d, spec)
			if r.local != "" && memberDirs[r.local] {
				continue // resolved to a workspace member (npm links those)
			}
			if r.lock == nil {
				// No lockfile knows it: a member whose version fits is linked.
				if mm, ok := memberNames[d.Name]; ok && mm.dir != m.dir && linksMember(spec, mm.pkg.Version) {
					continue
				}
			}
			if d.Kind == packagejson.Peer && !peerInstalled(r.lock, resolvers) {
				continue
			}
			add(r.name, r.version)
		}
	}
	slices.SortFunc(out, func(a, b protocol.PackageID) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Version, b.Version)
	})
	return out, nil
}

// lockKind says which package manager wrote a lockfile.
type lockKind int

const (
	kindPackageLock lockKind = iota // package-lock.json or npm-shrinkwrap.json
	kindYarn                        // yarn.lock
	kindPnpm                        // pnpm-lock.yaml
)

// namedLock is a parsed lockfile and the kind it is.
type namedLock struct {
	lockfile.Resolver
	kind lockKind
}

// lockfiles parses the lockfiles at the project root ws, in npm's order of
// preference: npm-shrinkwrap.json (which makes npm ignore package-lock.json),
// else package-lock.json, then yarn.lock, then pnpm-lock.yaml.
func lockfiles(rec *depcache.Recorder, ws string) ([]namedLock, error) {
	var out []namedLock
	shrink := filepath.Join(ws, "npm-shrinkwrap.json")
	lock := filepath.Join(ws, "package-lock.json")
	data, err := rec.ReadFile(shrink, pkgfile.MaxLockfile)
	file := shrink
	if errors.Is(err, fs.ErrNotExist) {
		data, err = rec.ReadFile(lock, pkgfile.MaxLockfile)
		file = lock
	}
	if err == nil {
		l, perr := packagelock.ParseFile(file, data)
		if perr != nil {
			return nil, perr
		}
		out = append(out, namedLock{l, kindPackageLock})
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err // a *pkgfile.Error: it names the file
	}
	for _, lf := range []struct {
		name  string
		kind  lockKind
		parse func([]byte) (lockfile.Resolver, error)
	}{
		{"yarn.lock", kindYarn, func(b []byte) (lockfile.Resolver, error) { return yarnlock.Parse(b) }},
		{"pnpm-lock.yaml", kindPnpm, func(b []byte) (lockfile.Resolver, error) { return pnpmlock.Parse(b) }},
	} {
		f := filepath.Join(ws, lf.name)
		data, err := rec.ReadFile(f, pkgfile.MaxLockfile)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err // a *pkgfile.Error: it names the file
		}
		l, err := lf.parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, namedLock{l, lf.kind})
	}
	return out, nil
}

// resolved is what resolveDep found for one declared dependency.
type resolved struct {
	name, version string
	// local is the workspace-relative target directory when the dependency
	// is a local directory, else "".
	local string
	// lock is the lockfile that answered, nil when none did.
	lock *namedLock
}

// resolveDep finds the exact version of one declared dependency: from the
// first lockfile that knows it, else from node_modules, else "*". importer
// is the declaring member's directory relative to the project root ws.
func resolveDep(rec *depcache.Recorder, ws string, resolvers []namedLock, importer string, d packagejson.Dep, spec packagejson.Spec) resolved {
	for i := range resolvers {
		lk := &resolvers[i]
		res, ok := lk.Resolve(importer, d.Name, d.Spec)
		if !ok {
			continue
		}
		if res.Link != "" {
			// A local directory: its own package.json says what it is.
			target := filepath.Join(ws, filepath.FromSlash(res.Link))
			if v := localVersion(rec, target); v != "" {
				return resolved{d.Name, v, res.Link, lk}
			}
			return resolved{d.Name, protocol.AnyVersion, res.Link, lk}
		}
		if validVersion(res.Version) {
			n := res.Name
			if n == "" {
				n = spec.Name
			}
			return resolved{n, res.Version, "", lk}
		}
		// A git/URL/file reference the lockfile has no version for: ask
		// node_modules.
		r := resolveInstalled(rec, ws, importer, d, spec)
		r.lock = lk
		return r
	}
	return resolveInstalled(rec, ws, importer, d, spec)
}

// resolveInstalled answers for a dependency no lockfile gives a version
// for: from node_modules, else "*".
func resolveInstalled(rec *depcache.Recorder, ws, importer string, d packagejson.Dep, spec packagejson.Spec) resolved {
	local := ""
	if spec.Kind == packagejson.File || spec.Kind == packagejson.Link {
		local = lockfile.JoinRel(importer, spec.Range)
	}
	if n, v := installedVersion(rec, ws, importer, d.Name); v != "" {
		switch spec.Kind {
		case packagejson.Alias, packagejson.URL, packagejson.Git:
			// The installed package says what it is, as the lockfile would
			// ("ms-url": "https://…/ms-2.0.0.tgz" installs ms 2.0.0).
			if !packagejson.ValidName(n) {
				n = spec.Name
			}
		default:
			n = spec.Name
		}
		return resolved{n, v, local, nil}
	}
	return resolved{spec.Name, protocol.AnyVersion, local, nil}
}

// inScope reports whether the member at dir (relative to the project root)
// is one whose dependencies are asked for: every member, unless the
// project was opened from inside one.
func inScope(proj project, dir string) bool {
	return !proj.scoped || proj.member == dir
}

// declaredOtherwise reports whether pkg declares name under a kind other
// than peerDependencies.
func declaredOtherwise(pkg *packagejson.Manifest, name string) bool {
	for _, d := range pkg.Deps {
		if d.Name == name && d.Kind != packagejson.Peer {
			return true
		}
	}
	return false
}

// peerInstalled reports whether a peer dependency, answered by lock (nil
// when no lockfile knew it), is installed as a direct dependency. npm 7 and
// later install peers, so package-lock.json records them and a project
// without any lockfile is read as npm would install it. pnpm installs a
// peer when the importer records it (auto-install-peers, the default since
// pnpm 8); yarn never installs a workspace's own peers.
func peerInstalled(lock *namedLock, all []namedLock) bool {
	if lock != nil {
		return lock.kind != kindYarn
	}
	for _, l := range all {
		if l.kind == kindPackageLock {
			return true // npm installs peers: an unlocked one is still wanted
		}
	}
	return len(all) == 0
}

// linksMember reports whether a dependency declared with spec on a
// workspace member (whose version is memberVersion) is satisfied by the
// member itself: local-directory specs always are, registry ranges when the
// member's version fits (npm, yarn and pnpm then link the member).
func linksMember(spec packagejson.Spec, memberVersion string) bool {
	switch spec.Kind {
	case packagejson.Alias, packagejson.Git, packagejson.URL:
		return false
	case packagejson.Other:
		// A pnpm "catalog:" names a registry version, not a member; other
		// protocols (yarn's portal:, patch:, ...) are left to the lockfile.
		return !strings.HasPrefix(strings.ToLower(spec.Range), "catalog:")
	case packagejson.Registry:
		r := strings.TrimSpace(spec.Range)
		if r == "" || r == "*" || r == "latest" {
			return true
		}
		ok, err := versions.NPM.Matches(r, memberVersion)
		return err == nil && ok
	}
	return true
}

// localVersion reads the version in dir/package.json, or "".
func localVersion(rec *depcache.Recorder, dir string) string {
	data, err := rec.ReadFile(filepath.Join(dir, "package.json"), pkgfile.MaxManifest)
	if err != nil {
		return ""
	}
	m, err := packagejson.Parse(data)
	if err != nil || !validVersion(m.Version) {
		return ""
	}
	return m.Version
}

// installedVersion looks for node_modules/<name>/package.json from the importer's
// directory up to the project root ws, as Node's resolution would, and
// returns the installed package's name and version.
func installedVersion(rec *depcache.Recorder, ws, importer, name string) (string, string) {
	dir := importer
	for {
		f := filepath.Join(ws, filepath.FromSlash(dir), "node_modules", filepath.FromSlash(name), "package.json")
		if data, err := rec.ReadPackageFile(f, pkgfile.MaxManifest); err == nil {
			if m, err := packagejson.Parse(data); err == nil && validVersion(m.Version) {
				return m.Name, m.Version
			}
		}
		if dir == "" {
			return "", ""
		}
		dir = path.Dir(dir)
		if dir == "." {
			dir = ""
		}
	}
}

// validVersion reports whether v is an exact npm version as node-semver
// reads one (" 1.0.0" and "v1.0.0" are): what a lockfile or package.json
// may say. A version that names a cache directory or is answered as a
// package's version is canonical (registry.CanonicalVersion).
func validVersion(v string) bool {
	if v == "" || v == protocol.AnyVersion {
		return false
	}
	_, err := versions.NPM.Compare(v, v)
	return err == nil
}

// sameVersion reports whether the exact versions a and b are equal as
// node-semver's eq compares them (npm's reading of a package.json's
// version): "v1.0.0" and " 1.0.0" are 1.0.0, and build metadata is
// ignored. Strings that are not versions are equal only as strings. It
// compares; it does not say how a version is written in an answer or a
// path (registry.CanonicalVersion does).
func sameVersion(a, b string) bool {
	if a == b {
		return true
	}
	c, err := versions.NPM.Compare(a, b)
	return err == nil && c == 0
}

// pnpmWorkspacePatterns reads the "packages" list of pnpm-workspace.yaml
// with a line scanner (the file is a short YAML list; a full YAML parse is
// not needed on the hook path).
func pnpmWorkspacePatterns(data []byte) []string {
	var out []string
	in := false
	for _, line := range bytes.Split(data, []byte("\n")) {
		s := strings.TrimRight(string(line), " \t\r")
		t := strings.TrimSpace(s)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if !strings.HasPrefix(s, " ") && !strings.HasPrefix(s, "-") {
			in = strings.HasPrefix(t, "packages:")
			continue
		}
		if in && strings.HasPrefix(t, "- ") {
			v := strings.TrimSpace(t[2:])
			if i := strings.Index(v, " #"); i >= 0 {
				v = strings.TrimSpace(v[:i])
			}
			v = strings.Trim(v, `"'`)
			if v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
