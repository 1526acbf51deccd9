package pypipm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/pipfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/pipfilelock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/poetrylock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/pylock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/uvlock"
	"github.com/symposium-dev/symposium-pm/pm-pypi/marker"
	"github.com/symposium-dev/symposium-pm/pm-pypi/pyproject"
	"github.com/symposium-dev/symposium-pm/pm-pypi/requirement"
	"github.com/symposium-dev/symposium-pm/pm-pypi/venv"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// ListDeps returns the workspace's direct dependencies with the exact
// versions the lockfiles, pins or virtualenv give, "*" when none does,
// from the files as they are at each call. The result is persisted under
// the cache directory (sdk/depcache), keyed on the mtime and size of every
// file and directory it was computed from, and reused only while the
// environment variables it read keep their values.
func (p *PM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	if deps, _, ok := p.loadDeps(); ok {
		return deps, nil
	}
	c := p.computed(ctx, true)
	return c.deps, c.err
}

// localTrees returns the local source trees of path and editable
// dependencies (normalized name to absolute directory), from the list_deps
// answer that stands now: the one this hook's list_deps just computed,
// else the one persisted (sharing list_deps' read of it), else one
// computed.
func (p *PM) localTrees(ctx context.Context) map[string]string {
	if c := p.lastComputed(); c != nil {
		return c.local
	}
	if r := p.loadRawDeps(); r.ok {
		return r.local
	}
	if _, local, ok := p.loadDeps(); ok {
		return local
	}
	return p.computed(ctx, false).local
}

// depsCacheKey names the persisted list_deps answer and versions its
// meaning and layout (see encodeDeps); the workspace directory follows it.
// It also names the answer persisted as sent (listdepsraw.go), which is
// written only when the answer is computed: version 6 has every cache
// compute it once more, to write that one too. Version 7 records the
// python3 candidates on PATH before the one found (all of them when none
// is) and the .dist-info directories passed over: answers persisted
// without them are not trusted.
const depsCacheKey = "pypi list_deps 7\x00"

// depsCache is where list_deps answers are persisted: nil, which stores
// nothing, when the host gave no cache directory.
func (p *PM) depsCache() *depcache.Cache {
	if !p.cacheSet {
		return nil
	}
	return depcache.New(filepath.Join(p.cache, "deps")).Remembering(&p.verified)
}

// depsHead is the first line of a persisted answer: what it depends on
// besides files, and what list_deps learns besides the dependencies.
type depsHead struct {
	// Env holds the environment variables the answer depends on
	// (VIRTUAL_ENV, ${VAR} in requirements files) with the sha256 of their
	// values, never the values: ${VAR} is how tokens reach requirements
	// files.
	Env map[string]string `json:"env,omitempty"`
	// Local maps path and editable dependencies to their source trees.
	Local map[string]string `json:"local,omitempty"`
}

// encodeDeps returns an answer as persisted: the head as one JSON line,
// then the dependencies in depcache's compact form. It reports false when
// the dependencies do not fit that form; such an answer is not persisted.
func encodeDeps(head depsHead, deps []protocol.PackageID) ([]byte, bool) {
	b, err := json.Marshal(head)
	if err != nil {
		return nil, false
	}
	return depcache.AppendDeps(append(b, '\n'), deps)
}

// decodeDeps parses what encodeDeps wrote.
func decodeDeps(data []byte) (depsHead, []protocol.PackageID, error) {
	var head depsHead
	line, rest, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return head, nil, errors.New("truncated list_deps answer")
	}
	if string(line) != "{}" {
		if err := json.Unmarshal(line, &head); err != nil {
			return head, nil, err
		}
	}
	deps, err := depcache.ParseDeps(rest, Name)
	return head, deps, err
}

// loadDeps returns the persisted list_deps answer and its local source
// trees while every input it was computed from is unchanged and the
// environment variables it read keep their values.
func (p *PM) loadDeps() ([]protocol.PackageID, map[string]string, bool) {
	raw, ok := p.depsCache().Load(depsCacheKey + p.ws)
	if !ok {
		return nil, nil, false
	}
	// An answer read under other values of the variables it depends on is
	// a miss, computed again and stored over.
	head, deps, err := decodeDeps(raw)
	if err != nil || !p.sameEnv(head.Env) {
		return nil, nil, false
	}
	return deps, head.Local, true
}

// computeDeps computes the list_deps answer from the files as they are
// now, for the request ctx belongs to, and persists it (decoded, and as
// sent) unless it came with diagnostics.
func (p *PM) computeDeps(ctx context.Context) *computedDeps {
	c := &computedDeps{start: time.Now()}
	r := &resolver{pm: p}
	before := pmserver.DiagnosticsSent(ctx)
	deps, err := r.run(ctx)
	c.stamps, c.end = r.rec.Stamps(), time.Now()
	if err != nil {
		c.err = err
		return c
	}
	local := map[string]string{}
	for n, d := range r.localDirs {
		if r.isDecl[n] {
			local[n] = d
		}
	}
	c.deps, c.local = deps, local
	// An answer that came with diagnostics is not cached: a cached copy
	// would not repeat them.
	head := depsHead{Env: hashValues(r.env), Local: local}
	if data, ok := encodeDeps(head, deps); ok && pmserver.DiagnosticsSent(ctx) == before {
		if err := p.depsCache().Store(depsCacheKey+p.ws, c.stamps, data); err != nil {
			p.log.Debug("cannot persist list_deps cache", "err", err)
		} else {
			p.storeRawDeps(ctx, head, c.stamps, deps)
		}
	}
	return c
}

// sameEnv reports whether the recorded variables still have their values
// (by sha256).
func (p *PM) sameEnv(env map[string]string) bool {
	for k, v := range env {
		if hashValue(p.getenv(k)) != v {
			return false
		}
	}
	return true
}

// hashValues maps each variable to the sha256 of its value.
func hashValues(env map[string]string) map[string]string {
	if env == nil {
		return nil
	}
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = hashValue(v)
	}
	return out
}

func hashValue(v string) string {
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

// resolver computes one list_deps answer and records its inputs.
type resolver struct {
	pm *PM
	// rec records the files and directories the answer is computed from.
	rec depcache.Recorder
	// declared are the direct dependencies, in first-declared order.
	declared []string
	isDecl   map[string]bool
	// local names the workspace's own projects (never dependencies).
	local map[string]bool
	// pins are exact versions the declarations themselves give.
	pins map[string]string
	// versions found so far.
	versions map[string]string
	// reqFiles are the root requirements*.txt files.
	reqFiles []string
	// localDirs are the source trees of path and editable dependencies.
	localDirs map[string]string
	// env records the environment variables read, with their values.
	env map[string]string
	// ctx is the list_deps call's context; mEnv the marker environment
	// lock markers are evaluated in, computed on first need.
	ctx  context.Context
	mEnv marker.Env
	// venv is the project's virtualenv, found once per computation
	// (venvFound) so that every source reads the same one.
	venv      *venv.Env
	venvFound bool
}

// environment returns the project's virtualenv as this computation found
// it, or nil.
func (r *resolver) environment() *venv.Env {
	if !r.venvFound {
		r.venv, r.venvFound = r.pm.environment(), true
	}
	return r.venv
}

func (r *resolver) getenv(k string) string {
	v := r.pm.getenv(k)
	if r.env == nil {
		r.env = map[string]string{}
	}
	r.env[k] = v
	return v
}

// localDir records a path dependency's source tree (relative to base).
func (r *resolver) localDir(name, base, path string) {
	if path == "" || strings.Contains(path, "://") && !strings.HasPrefix(path, "file:") {
		return
	}
	if strings.HasPrefix(path, "file:") {
		if u, err := url.Parse(path); err == nil && u.Path != "" {
			path = u.Path
		} else {
			path = strings.TrimPrefix(path, "file:")
		}
	}
	if i := strings.IndexAny(path, "#?"); i >= 0 {
		path = path[:i]
	}
	dir := filepath.FromSlash(path)
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(base, dir)
	}
	if r.localDirs == nil {
		r.localDirs = map[string]string{}
	}
	if _, ok := r.localDirs[name]; !ok {
		r.localDirs[name] = filepath.Clean(dir)
	}
}

// read reads a file of the workspace (at most limit bytes, with
// depcache.Recorder.ReadFile: a FIFO or a device is refused at once) and
// records it as an input; a missing file is recorded too (its appearance
// must invalidate the cache). A file that cannot be read is warned about,
// naming it, and passed over.
func (r *resolver) read(path string, limit int64) ([]byte, bool) {
	data, err := r.rec.ReadFile(path, limit)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.rwarn(path, err, "it is ignored", "cannot read", "path", path, "err", err)
		}
		return nil, false
	}
	return data, true
}

// watchDir records a directory whose listing the result depends on.
func (r *resolver) watchDir(path string) { r.rec.Observe(path) }

func (r *resolver) declare(name, pin string) {
	if r.local[name] || r.isDecl[name] && (pin == "" || r.pins[name] != "") {
		return
	}
	if !r.isDecl[name] {
		r.isDecl[name] = true
		r.declared = append(r.declared, name)
	}
	if pin != "" {
		r.pins[name] = pin
	}
}

func (r *resolver) run(ctx context.Context) ([]protocol.PackageID, error) {
	r.ctx = ctx
	ws := r.pm.ws
	r.isDecl, r.local, r.pins, r.versions = map[string]bool{}, map[string]bool{}, map[string]string{}, map[string]string{}
	r.watchDir(ws) // new requirements*.txt or pylock files appear here
	for _, name := range listDir(ws) {
		if strings.HasPrefix(name, "requirements") && strings.HasSuffix(name, ".txt") {
			r.reqFiles = append(r.reqFiles, filepath.Join(ws, name))
		}
	}

	// 1. Declarations.
	var projects []*pyproject.Project
	projDir := map[*pyproject.Project]string{}
	if data, ok := r.read(filepath.Join(ws, "pyproject.toml"), pkgfile.MaxManifest); ok {
		proj, err := pyproject.Parse(data)
		if err != nil {
			return nil, errorf("workspace %s: %w", ws, err)
		}
		r.warnAll(filepath.Join(ws, "pyproject.toml"), proj.Problems)
		projects = append(projects, proj)
		projDir[proj] = ws
		for _, dir := range r.members(proj) {
			mp := filepath.Join(dir, "pyproject.toml")
			data, ok := r.read(mp, pkgfile.MaxManifest)
			if !ok {
				continue
			}
			m, err := pyproject.Parse(data)
			if err != nil {
				r.rwarn(mp, err, "this workspace member is left out", "skipping workspace member", "path", mp, "err", err)
				continue
			}
			r.warnAll(mp, m.Problems)
			projects = append(projects, m)
			projDir[m] = dir
		}
	}
	for _, proj := range projects {
		if proj.Name != "" {
			r.local[proj.Name] = true
		}
	}
	declaredByPyproject := false
	for _, proj := range projects {
		for n, path := range proj.LocalSources {
			r.localDir(n, projDir[proj], path)
		}
		for _, d := range proj.Deps {
			pin, _ := d.Req.Pin()
			if d.Req.URL != "" {
				if _, v, ok := requirement.NameFromURL(d.Req.URL); ok {
					pin = v
				}
				if strings.HasPrefix(d.Req.URL, "file:") {
					r.localDir(d.Name, projDir[proj], d.Req.URL)
				}
			}
			r.localDir(d.Name, projDir[proj], d.Path)
			r.declare(d.Name, pin)
			declaredByPyproject = true
		}
	}
	if !declaredByPyproject {
		if data, ok := r.read(filepath.Join(ws, "Pipfile"), pkgfile.MaxManifest); ok {
			deps, err := pipfile.Parse(data)
			if err != nil {
				return nil, errorf("workspace %s: %w", ws, err)
			}
			for _, d := range deps {
				r.declare(d.Name, d.Version)
				r.localDir(d.Name, ws, d.Path)
			}
		} else {
			for _, f := range r.reqFiles {
				for _, e := range r.requirements(f) {
					if !e.Constraint {
						r.declare(e.Name, e.Version)
						if u := e.Req.URL; u != "" && !strings.HasSuffix(u, ".whl") && !strings.HasSuffix(u, ".tar.gz") && !strings.HasSuffix(u, ".zip") {
							r.localDir(e.Name, filepath.Dir(e.File), u)
						}
					}
				}
			}
		}
	}

	// 2. Versions, from the most to the least authoritative source; each
	// source is read only while some dependency still lacks a version.
	sources := []func(){r.fromUVLock, r.fromPoetryLock, r.fromPylock, r.fromPipfileLock, r.fromRequirementPins, r.fromDeclaredPins, r.fromLocalTrees, r.fromVenv}
	for _, src := range sources {
		if r.complete() {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		src()
	}
	out := make([]protocol.PackageID, 0, len(r.declared))
	for _, n := range r.declared {
		v := r.versions[n]
		if v == "" {
			v = protocol.AnyVersion
		}
		out = append(out, pkgID(n, v))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (r *resolver) warnAll(path string, problems []error) {
	for _, e := range problems {
		r.rwarn(path, e, "this declaration is skipped", "skipping a declaration", "path", path, "err", e)
	}
}

func (r *resolver) complete() bool {
	for _, n := range r.declared {
		if r.versions[n] == "" {
			return false
		}
	}
	return true
}

// offer records a version for a declared name that has none yet; several
// versions from one source keep the greatest.
func (r *resolver) offer(found map[string]string, name, version string) {
	if !r.isDecl[name] || version == "" || r.versions[name] != "" {
		return
	}
	version = canon(version)
	if old, ok := found[name]; ok {
		if c, err := versions.PEP440.Compare(version, old); err != nil || c <= 0 {
			return
		}
	}
	found[name] = version
}

// wants reports whether name is a declared dependency still without a
// version.
func (r *resolver) wants(name string) bool { return r.isDecl[name] && r.versions[name] == "" }

func (r *resolver) commit(found map[string]string) {
	for n, v := range found {
		if r.versions[n] == "" {
			r.versions[n] = v
		}
	}
}

// members returns the uv workspace member directories of the root project.
func (r *resolver) members(proj *pyproject.Project) []string {
	var dirs []string
	excluded := map[string]bool{}
	for _, ex := range proj.WorkspaceExclude {
		matches, _ := filepath.Glob(filepath.Join(r.pm.ws, filepath.FromSlash(ex)))
		for _, m := range matches {
			excluded[m] = true
		}
	}
	for _, pat := range proj.WorkspaceMembers {
		full := filepath.Join(r.pm.ws, filepath.FromSlash(pat))
		// The listing of the glob's fixed parent decides its matches.
		parent := full
		for strings.ContainsAny(parent, "*?[") {
			parent = filepath.Dir(parent)
		}
		r.watchDir(parent)
		matches, err := filepath.Glob(full)
		if err != nil {
			r.rwarn(filepath.Join(r.pm.ws, "pyproject.toml"), fmt.Errorf("workspace member pattern %q: %w", pat, err), "it matches nothing", "bad workspace member pattern", "pattern", pat, "err", err)
			continue
		}
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() && !excluded[m] && m != r.pm.ws {
				dirs = append(dirs, m)
			}
		}
	}
	sort.Strings(dirs)
	return dirs
}

func (r *resolver) requirements(path string) []requirement.Entry {
	f, err := requirement.ParseFile(path, requirement.Options{
		ReadFile: func(p string) ([]byte, error) {
			data, ok := r.read(p, pkgfile.MaxManifest)
			if !ok {
				return nil, os.ErrNotExist
			}
			return data, nil
		},
		Getenv: r.getenv,
		ProjectName: func(dir string) string {
			data, ok := r.read(filepath.Join(dir, "pyproject.toml"), pkgfile.MaxManifest)
			if !ok {
				return ""
			}
			proj, err := pyproject.Parse(data)
			if err != nil {
				return ""
			}
			return proj.Name
		},
	})
	if err != nil {
		r.rwarn(path, err, "the requirements in it are left out", "skipping requirements file", "path", path, "err", err)
		return nil
	}
	r.warnAll(path, f.Problems)
	for _, e := range f.Warnings {
		r.rwarn(path, e, "", "reading a requirement as pip does", "path", path, "err", e)
	}
	return f.Entries
}

func (r *resolver) fromUVLock() {
	r.fromLockReader(filepath.Join(r.pm.ws, "uv.lock"), func(f io.ReadSeeker) (lockfile.Resolver, error) { return uvlock.ParseReader(f) })
}

func (r *resolver) fromPoetryLock() {
	r.fromLockReader(filepath.Join(r.pm.ws, "poetry.lock"), func(f io.ReadSeeker) (lockfile.Resolver, error) { return poetrylock.ParseReader(f) })
}

// fromLockReader is fromLock for the lockfiles read a table at a time from
// the file, never whole in memory (opened with pkgfile.OpenUserFile, and
// read no further than its size then).
func (r *resolver) fromLockReader(path string, parse func(io.ReadSeeker) (lockfile.Resolver, error)) {
	r.rec.Observe(path)
	f, size, err := pkgfile.OpenUserFile(path, pkgfile.MaxLockfile)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.rwarn(path, err, "it is ignored", "cannot read", "path", path, "err", err)
		}
		return
	}
	l, err := parse(io.NewSectionReader(f, 0, size))
	f.Close()
	if err != nil {
		r.pm.log.Warn("ignoring lockfile", "path", path, "err", err)
		return
	}
	r.useLock(path, l)
}

func (r *resolver) fromPylock() {
	var files []string
	for _, name := range listDir(r.pm.ws) {
		if pylock.IsFileName(name) {
			files = append(files, filepath.Join(r.pm.ws, name))
		}
	}
	// pylock.toml first, then the named ones in order.
	sort.Slice(files, func(i, j int) bool {
		bi, bj := filepath.Base(files[i]) == "pylock.toml", filepath.Base(files[j]) == "pylock.toml"
		if bi != bj {
			return bi
		}
		return files[i] < files[j]
	})
	for _, path := range files {
		r.fromLock(path, func(b []byte) (lockfile.Resolver, error) { return pylock.Parse(b) })
	}
}

func (r *resolver) fromPipfileLock() {
	r.fromLock(filepath.Join(r.pm.ws, "Pipfile.lock"), func(b []byte) (lockfile.Resolver, error) { return pipfilelock.Parse(b) })
}

// fromLock reads the lockfile at path with parse and commits the version it
// locked for each dependency still without one; a lockfile that does not
// parse is skipped with a warning. The workspace members a lockfile names
// (lockfile.WorkspaceReader) are the workspace's own projects, not
// dependencies, and the local source trees it names are recorded.
func (r *resolver) fromLock(path string, parse func([]byte) (lockfile.Resolver, error)) {
	data, ok := r.read(path, pkgfile.MaxLockfile)
	if !ok {
		return
	}
	l, err := parse(data)
	if err != nil {
		r.pm.log.Warn("ignoring lockfile", "path", path, "err", err)
		return
	}
	r.useLock(path, l)
}

// useLock resolves the declared dependencies through the lockfile l read
// from path.
func (r *resolver) useLock(path string, l lockfile.Resolver) {
	var ws lockfile.Workspace
	if w, ok := l.(lockfile.WorkspaceReader); ok {
		ws = w.Workspace()
	}
	for _, m := range ws.Members {
		delete(r.isDecl, m)
	}
	for _, src := range ws.Sources {
		r.localDir(src.Name, filepath.Dir(path), src.Path)
	}
	found := map[string]string{}
	for _, name := range r.declared {
		if !r.wants(name) {
			continue
		}
		if v, ok := r.pickLocked(name, l.Resolve(name)); ok {
			r.offer(found, name, v)
		}
	}
	r.commit(found)
	if len(ws.Members) > 0 {
		kept := r.declared[:0]
		for _, n := range r.declared {
			if r.isDecl[n] {
				kept = append(kept, n)
			}
		}
		r.declared = kept
	}
}

func (r *resolver) fromRequirementPins() {
	for _, f := range r.reqFiles {
		found := map[string]string{}
		for _, e := range r.requirements(f) {
			r.offer(found, e.Name, e.Version)
		}
		r.commit(found)
	}
}

func (r *resolver) fromDeclaredPins() {
	found := map[string]string{}
	for n, v := range r.pins {
		r.offer(found, n, v)
	}
	r.commit(found)
}

// fromLocalTrees reads the [project] version of path dependencies' source
// trees.
func (r *resolver) fromLocalTrees() {
	found := map[string]string{}
	for n, dir := range r.localDirs {
		if !r.isDecl[n] || r.versions[n] != "" {
			continue
		}
		data, ok := r.read(filepath.Join(dir, "pyproject.toml"), pkgfile.MaxManifest)
		if !ok {
			continue
		}
		if proj, err := pyproject.Parse(data); err == nil && proj.Version != "" {
			r.offer(found, n, proj.Version)
		}
	}
	r.commit(found)
}

func (r *resolver) fromVenv() {
	for _, c := range venv.Candidates(r.pm.ws, r.getenv) {
		r.watchDir(c)
	}
	env := r.environment()
	if env == nil {
		return
	}
	for _, s := range env.SitePackages {
		r.watchDir(s) // installs and upgrades rename dist-info directories
	}
	var missing []string
	for _, n := range r.declared {
		if r.versions[n] == "" {
			missing = append(missing, n)
		}
	}
	found := map[string]string{}
	dists, passed := env.LookupAll(missing)
	for n, d := range dists {
		r.offer(found, n, d.Version)
	}
	// A .dist-info named for a dependency whose METADATA cannot be read
	// (yet: an installer or a hook still writing it) or names another
	// project is passed over; METADATA written or fixed later changes the
	// answer.
	for _, pd := range passed {
		r.watchDir(pd.DistInfo)
		r.rec.Observe(filepath.Join(pd.DistInfo, "METADATA"))
	}
	r.commit(found)
}

func listDir(dir string) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	names, _ := f.Readdirnames(-1)
	sort.Strings(names)
	return names
}
