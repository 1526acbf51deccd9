package npmpm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/packagelock"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/pnpmlock"
	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile/yarnlock"
	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// listCacheVersion changes whenever the cache file's meaning changes.
const listCacheVersion = 1

// stamp is what list_deps remembers of one path it read: the modification
// time and size, or that it was absent.
type stamp struct {
	Path  string
	MTime int64 // UnixNano; -1 when absent
	Size  int64
}

// listCache is the persisted list_deps answer with the stamps it depends on.
// It is stored as lines, not JSON, so that a cache hit costs little more
// than the stats:
//
//	symposium-pm-npm list_deps <version>
//	w <workspace>
//	s <mtime> <size> <path>     (one per stamp; mtime -1 when absent)
//	d <name> <version>          (one per dependency)
//
// Fields are separated by tabs; a file containing a newline or tab in a
// path, name or version is never written.
type listCache struct {
	Workspace string
	Stamps    []stamp
	Deps      []protocol.PackageID
}

var listCacheHeader = "symposium-pm-npm list_deps " + strconv.Itoa(listCacheVersion)

func (c *listCache) encode() ([]byte, bool) {
	var b bytes.Buffer
	bad := func(s string) bool { return strings.ContainsAny(s, "\t\n") }
	if bad(c.Workspace) {
		return nil, false
	}
	b.WriteString(listCacheHeader + "\nw\t" + c.Workspace + "\n")
	for _, s := range c.Stamps {
		if bad(s.Path) {
			return nil, false
		}
		fmt.Fprintf(&b, "s\t%d\t%d\t%s\n", s.MTime, s.Size, s.Path)
	}
	for _, d := range c.Deps {
		if bad(d.Name) || bad(d.Version) {
			return nil, false
		}
		b.WriteString("d\t" + d.Name + "\t" + d.Version + "\n")
	}
	return b.Bytes(), true
}

func decodeListCache(data []byte) (*listCache, bool) {
	lines := strings.Split(string(data), "\n")
	if len(lines) < 2 || lines[0] != listCacheHeader {
		return nil, false
	}
	c := &listCache{Deps: []protocol.PackageID{}}
	for _, l := range lines[1:] {
		if l == "" {
			continue
		}
		f := strings.SplitN(l, "\t", 4)
		switch {
		case f[0] == "w" && len(f) == 2:
			c.Workspace = f[1]
		case f[0] == "s" && len(f) == 4:
			m, err1 := strconv.ParseInt(f[1], 10, 64)
			sz, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				return nil, false
			}
			c.Stamps = append(c.Stamps, stamp{Path: f[3], MTime: m, Size: sz})
		case f[0] == "d" && len(f) == 3:
			c.Deps = append(c.Deps, protocol.PackageID{PM: Name, Name: f[1], Version: f[2]})
		default:
			return nil, false
		}
	}
	return c, true
}

// recorder collects the stamps of everything a computation reads.
type recorder struct {
	stamps map[string]stamp
}

func newRecorder() *recorder { return &recorder{stamps: map[string]stamp{}} }

// stat records p's stamp and returns its FileInfo (nil when absent).
func (r *recorder) stat(p string) fs.FileInfo {
	fi, err := os.Stat(p)
	if err != nil {
		r.stamps[p] = stamp{Path: p, MTime: -1}
		return nil
	}
	r.stamps[p] = stamp{Path: p, MTime: fi.ModTime().UnixNano(), Size: fi.Size()}
	return fi
}

// read records p's stamp, then reads it. A missing file yields fs.ErrNotExist.
func (r *recorder) read(p string) ([]byte, error) {
	if fi := r.stat(p); fi == nil {
		return nil, fs.ErrNotExist
	}
	return os.ReadFile(p)
}

func (r *recorder) list() []stamp {
	out := make([]stamp, 0, len(r.stamps))
	for _, s := range r.stamps {
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b stamp) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// fresh reports whether every stamp still matches the file system.
func fresh(stamps []stamp) bool {
	for _, s := range stamps {
		fi, err := os.Stat(s.Path)
		if err != nil {
			if s.MTime != -1 {
				return false
			}
			continue
		}
		if s.MTime != fi.ModTime().UnixNano() || s.Size != fi.Size() {
			return false
		}
	}
	return true
}

// listCachePath is where the list_deps cache of workspace lives.
func (p *PM) listCachePath() string {
	h := sha256.Sum256([]byte(p.workspace))
	return filepath.Join(p.cacheRoot, "list_deps", hex.EncodeToString(h[:12])+".txt")
}

// ListDeps implements pmserver.DepLister.
func (p *PM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	if p.cacheRoot != "" {
		if data, err := os.ReadFile(p.listCachePath()); err == nil {
			if c, ok := decodeListCache(data); ok && c.Workspace == p.workspace && fresh(c.Stamps) {
				return c.Deps, nil
			}
		}
	}
	rec := newRecorder()
	deps, err := p.computeDeps(ctx, rec)
	if err != nil {
		return nil, err
	}
	if p.cacheRoot != "" {
		c := listCache{Workspace: p.workspace, Stamps: rec.list(), Deps: deps}
		if data, ok := c.encode(); ok {
			if err := writeFileAtomic(p.listCachePath(), data); err != nil {
				p.log.Debug("cannot persist the list_deps cache", "err", err)
			}
		}
	}
	return deps, nil
}

// member is the root project or one workspace member.
type member struct {
	dir string // slash-separated, relative to the workspace; "" for the root
	pkg *packagejson.Manifest
}

// computeDeps reads the project and returns its direct dependencies.
func (p *PM) computeDeps(ctx context.Context, rec *recorder) ([]protocol.PackageID, error) {
	ws := p.workspace
	rootPath := filepath.Join(ws, "package.json")
	data, err := rec.read(rootPath)
	if errors.Is(err, fs.ErrNotExist) {
		return []protocol.PackageID{}, nil // not an npm project
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", rootPath, err)
	}
	rootPkg, err := packagejson.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rootPath, err)
	}
	members := []member{{dir: "", pkg: rootPkg}}
	patterns := rootPkg.Workspaces
	if pw, err := rec.read(filepath.Join(ws, "pnpm-workspace.yaml")); err == nil {
		patterns = append(patterns, pnpmWorkspacePatterns(pw)...)
	}
	if len(patterns) > 0 {
		ex := packagejson.ExpandWorkspaces(ws, patterns)
		for _, d := range ex.Listed {
			rec.stat(d)
		}
		for _, d := range ex.Matched {
			// A package.json appearing in (or leaving) a matched directory
			// changes membership without touching any listed directory.
			rec.stat(filepath.Join(ws, filepath.FromSlash(d), "package.json"))
		}
		for _, d := range ex.Dirs {
			if d == "" {
				continue
			}
			mp := filepath.Join(ws, filepath.FromSlash(d), "package.json")
			md, err := rec.read(mp)
			if err != nil {
				continue
			}
			pkg, err := packagejson.Parse(md)
			if err != nil {
				p.log.Warn("skipping workspace member with an unreadable package.json", "path", mp, "err", err)
				continue
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

	resolvers, err := p.lockfiles(rec)
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
		for _, d := range m.pkg.Deps {
			spec := packagejson.ParseSpec(d.Name, d.Spec)
			if spec.Kind == packagejson.Workspace {
				continue // a workspace member: part of the workspace, not a dependency
			}
			if mm, ok := memberNames[d.Name]; ok && mm.dir != m.dir && linksMember(spec, mm.pkg.Version) {
				continue // npm, yarn and pnpm link a member whose version fits
			}
			name, version, local := p.resolveDep(rec, resolvers, m.dir, d, spec)
			if local != "" && memberDirs[local] {
				continue // resolved to a workspace member (npm links those)
			}
			add(name, version)
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

// lockfiles parses the lockfiles at the workspace root, in npm's order of
// preference: npm-shrinkwrap.json (which makes npm ignore package-lock.json),
// else package-lock.json, then yarn.lock, then pnpm-lock.yaml.
func (p *PM) lockfiles(rec *recorder) ([]lockfile.Resolver, error) {
	var out []lockfile.Resolver
	ws := p.workspace
	shrink := filepath.Join(ws, "npm-shrinkwrap.json")
	lock := filepath.Join(ws, "package-lock.json")
	data, err := rec.read(shrink)
	file := shrink
	if errors.Is(err, fs.ErrNotExist) {
		data, err = rec.read(lock)
		file = lock
	}
	if err == nil {
		l, perr := packagelock.Parse(data)
		if perr != nil {
			return nil, fmt.Errorf("%s: %w", file, perr)
		}
		out = append(out, l)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	for _, lf := range []struct {
		name  string
		parse func([]byte) (lockfile.Resolver, error)
	}{
		{"yarn.lock", func(b []byte) (lockfile.Resolver, error) { return yarnlock.Parse(b) }},
		{"pnpm-lock.yaml", func(b []byte) (lockfile.Resolver, error) { return pnpmlock.Parse(b) }},
	} {
		f := filepath.Join(ws, lf.name)
		data, err := rec.read(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		l, err := lf.parse(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// resolveDep finds the exact version of one declared dependency: from the
// first lockfile that knows it, else from node_modules, else "*". It
// returns the registry name, the version, and the workspace-relative target
// directory when the dependency is a local directory.
func (p *PM) resolveDep(rec *recorder, resolvers []lockfile.Resolver, importer string, d packagejson.Dep, spec packagejson.Spec) (name, version, local string) {
	for _, r := range resolvers {
		res, ok := r.Resolve(importer, d.Name, d.Spec)
		if !ok {
			continue
		}
		if res.Link != "" {
			// A local directory: its own package.json says what it is.
			local = res.Link
			target := filepath.Join(p.workspace, filepath.FromSlash(res.Link))
			if v := p.localVersion(rec, target); v != "" {
				return d.Name, v, local
			}
			return d.Name, protocol.AnyVersion, local
		}
		if validVersion(res.Version) {
			n := res.Name
			if n == "" {
				n = spec.Name
			}
			return n, res.Version, ""
		}
		break // a git/URL/file reference: ask node_modules
	}
	if spec.Kind == packagejson.File || spec.Kind == packagejson.Link {
		local = lockfile.JoinRel(importer, spec.Range)
	}
	if n, v := p.installed(rec, importer, d.Name); v != "" {
		if n == "" || spec.Kind != packagejson.Alias {
			n = spec.Name
		}
		return n, v, local
	}
	return spec.Name, protocol.AnyVersion, local
}

// linksMember reports whether a dependency declared with spec on a
// workspace member (whose version is memberVersion) is satisfied by the
// member itself: local-directory specs always are, registry ranges when the
// member's version fits (npm, yarn and pnpm then link the member).
func linksMember(spec packagejson.Spec, memberVersion string) bool {
	switch spec.Kind {
	case packagejson.Alias, packagejson.Git, packagejson.URL:
		return false
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
func (p *PM) localVersion(rec *recorder, dir string) string {
	data, err := rec.read(filepath.Join(dir, "package.json"))
	if err != nil {
		return ""
	}
	m, err := packagejson.Parse(data)
	if err != nil || !validVersion(m.Version) {
		return ""
	}
	return m.Version
}

// installed looks for node_modules/<name>/package.json from the importer's
// directory up to the workspace root, as Node's resolution would, and
// returns the installed package's name and version.
func (p *PM) installed(rec *recorder, importer, name string) (string, string) {
	dir := importer
	for {
		f := filepath.Join(p.workspace, filepath.FromSlash(dir), "node_modules", filepath.FromSlash(name), "package.json")
		if data, err := rec.read(f); err == nil {
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

// validVersion reports whether v is an exact npm version.
func validVersion(v string) bool {
	if v == "" || v == protocol.AnyVersion {
		return false
	}
	_, err := versions.NPM.Compare(v, v)
	return err == nil
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

// writeFileAtomic writes data to path through a temporary file and rename.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr != nil || cerr != nil {
		os.Remove(f.Name())
		return errors.Join(werr, cerr)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
