package pypipm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/pm-pypi/pyproject"
	"github.com/symposium-dev/symposium-pm/pm-pypi/venv"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skilltree"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/pydist"
	"github.com/symposium-dev/symposium-pm/sdk/tomlfile"
)

// EntryPointGroup is the entry-point group through which a distribution
// offers a plugin: each entry's value names the import package whose
// directory is the plugin root (sdk/pydist reads it).
const EntryPointGroup = pydist.EntryPointGroup

// ManifestFile is the manifest file name looked for in a plugin root.
const ManifestFile = "SYMPOSIUM.toml"

// installed describes a distribution on disk, installed or unpacked.
type installed struct {
	id protocol.PackageID
	// site is the directory import packages resolve against
	// (site-packages, or an unpacked wheel's root).
	site string
	// distInfo is the .dist-info directory ("" for sdists and source trees).
	distInfo string
	// source is a local source tree (editable install, sdist), or "".
	source string
	// editable is set when source is the project directory of an
	// editable install, corroborated by the installed files.
	editable bool
	// rec records what active_plugins reads about this distribution, for
	// the persisted answer; nil elsewhere.
	rec *depcache.Recorder
	// editableVia names the installed file (a .pth file or __editable__
	// finder listed in RECORD) that corroborates editable.
	editableVia string
	// owned is set for a distribution whose files an installer wrote and
	// owns (see ownedByInstaller): rec is then nil, as nothing read from
	// it is recorded.
	owned bool
}

// computeOffers answers active_plugins (see ActivePlugins) for the source
// trees local, recording in rec what it read.
func (p *PM) computeOffers(ctx context.Context, deps []protocol.PackageID, local map[string]string, rec *depcache.Recorder) ([]protocol.Offer, error) {
	var names []string
	reqs := map[string]string{}
	ids := map[string]protocol.PackageID{}
	for _, d := range deps {
		name, req, err := checkID(d)
		if err != nil {
			p.log.Debug("skipping dependency", "id", d, "err", err)
			continue
		}
		names = append(names, name)
		reqs[name] = req
		ids[name] = d
	}
	env := p.environment()
	p.recordEnvironment(rec, env)
	var inst map[string]installed
	if env != nil {
		inst = map[string]installed{}
		found, passed := env.LookupAll(names)
		for n, d := range found {
			inst[n] = installed{id: pkgID(d.Name, canon(d.Version)), site: d.Site, distInfo: d.DistInfo}
		}
		p.passedDistInfos(ctx, passed, found, ids, rec)
	}
	// Each dependency is a handful of small file reads: overlap them, each
	// recorded apart and merged after.
	results := make([][]protocol.Offer, len(names))
	recs := make([]depcache.Recorder, len(names))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(4, len(names)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results[i] = p.depOffers(ctx, names[i], reqs[names[i]], inst, local, &recs[i])
			}
		}()
	}
	for i := range names {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	offers := []protocol.Offer{}
	for i, r := range results {
		offers = append(offers, r...)
		rec.Merge(&recs[i])
	}
	return offers, nil
}

// passedDistInfos records the .dist-info directories venv.LookupAll
// passed over (named for a dependency, but whose METADATA cannot be read or
// names another project), and their METADATA, so that METADATA written or
// fixed later (an installer or a hook still running) invalidates the
// answer. One for a dependency no other .dist-info answers is warned
// about: the dependency is not seen as installed.
func (p *PM) passedDistInfos(ctx context.Context, passed []venv.Passed, found map[string]venv.Dist, ids map[string]protocol.PackageID, rec *depcache.Recorder) {
	for _, pd := range passed {
		rec.ObserveDir(pd.DistInfo)
		meta := filepath.Join(pd.DistInfo, "METADATA")
		rec.Observe(meta)
		if _, ok := found[pd.Name]; ok {
			continue
		}
		cause := strings.TrimPrefix(pkgfile.Cause(pd.Err), pd.DistInfo+": ")
		var pkg *protocol.PackageID
		if id, ok := ids[pd.Name]; ok {
			pkg = idRef(id)
		}
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("the installed distribution cannot be read (%s); its plugins are not offered from the virtualenv", cause),
			File: meta, Package: pkg},
			"passing over a .dist-info whose METADATA cannot be read", "name", pd.Name, "dist_info", pd.DistInfo, "err", pd.Err)
	}
}

// readTreeProject reads the pyproject.toml of a source tree (a path
// dependency's, an editable install's project) as a package's files are
// read (sdk/pkgfile): a link out of dir, a file that is not regular or one
// over the manifest cap is refused with a warning saying so and what
// follows (consequence), about pkg when it is not nil. An absent file is
// not a problem.
func (p *PM) readTreeProject(ctx context.Context, dir string, pkg *protocol.PackageID, consequence string) ([]byte, bool) {
	data, err := pkgfile.ReadFile(dir, "pyproject.toml", pkgfile.MaxManifest)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("pyproject.toml cannot be read (%s); %s", pkgfile.Cause(err), consequence),
				File: filepath.Join(dir, "pyproject.toml"), Package: pkg},
				"refusing the pyproject.toml of a source tree", "dir", dir, "err", err)
		}
		return nil, false
	}
	return data, true
}

// localTree describes the source tree of a path dependency; its version is
// the requested exact one, else the tree's own [project] version, else "*".
func (p *PM) localTree(ctx context.Context, name, req, dir string, rec *depcache.Recorder) (installed, bool) {
	if !rec.ObserveDir(dir) {
		return installed{}, false
	}
	version, ok := exactPin(req)
	if !ok {
		rec.Observe(filepath.Join(dir, "pyproject.toml"))
		// Without its version the tree offers nothing.
		data, ok := p.readTreeProject(ctx, dir, nil, "the path dependency "+name+" offers no plugin")
		if !ok {
			return installed{}, false
		}
		// A version left to the build backend (dynamic), or a file that
		// does not parse (sourceTreeOffer reports it), is "*", as
		// list_deps lists the dependency.
		version = "*"
		if proj, err := pyproject.Parse(data); err == nil && proj.Version != "" {
			version = canon(proj.Version)
		}
	}
	return installed{id: pkgID(name, version), source: dir, rec: rec}, true
}

// depOffers returns the offers of one dependency: its installed copy, an
// exact cached version the virtualenv does not hold, or its source tree.
func (p *PM) depOffers(ctx context.Context, n, req string, inst map[string]installed, local map[string]string, rec *depcache.Recorder) []protocol.Offer {
	in, ok := inst[n]
	if ok {
		in = p.fromDist(ctx, in.id.Name, in.id.Version, in.site, in.distInfo, rec)
	}
	if !ok || !matches(req, in.id.Version) {
		cached, cok := p.cachedDist(n, req, rec)
		switch {
		case cok:
			in, ok = cached, true
		case ok:
			p.log.Debug("using the installed version", "name", n, "installed", in.id.Version, "wanted", req)
		}
	}
	if dir, isLocal := local[n]; isLocal && (!ok || in.source == "") {
		// A path or editable dependency: its source tree, even when the
		// virtualenv holds no (or a non-editable) copy.
		if tree, tok := p.localTree(ctx, n, req, dir, rec); tok {
			in, ok = tree, true
		}
	}
	if !ok {
		return nil
	}
	offers := p.offers(ctx, in, false)
	if in.owned {
		// Nothing read from an installer-owned distribution was recorded:
		// only its roots are, for the cache to check they still exist.
		for _, o := range offers {
			rec.ObserveDir(o.Root)
		}
	}
	return offers
}

// fromDist describes a distribution installed in site-packages. What
// active_plugins reads from it is recorded in rec, unless it is
// installer-owned (see ownedByInstaller): then nothing read from it is
// recorded, the stamp of its site-packages directory (recordEnvironment)
// standing for all of it.
func (p *PM) fromDist(ctx context.Context, name, version, site, distInfo string, rec *depcache.Recorder) installed {
	// Whether the distribution is installer-owned is known once
	// direct_url.json is read: what is read until then is recorded apart.
	var head *depcache.Recorder
	if rec != nil {
		head = &depcache.Recorder{}
	}
	in := installed{id: pkgID(name, canon(version)), site: site, distInfo: distInfo, rec: head}
	head.ObserveDir(distInfo)
	head.Observe(filepath.Join(distInfo, "METADATA"))
	if dir, via, ok := p.editableProject(ctx, in); ok {
		in.source, in.editable, in.editableVia = dir, true, via
	}
	if !in.editable && ownedByInstaller(distInfo) {
		in.rec, in.owned = nil, true
		return in
	}
	rec.Merge(head)
	in.rec = rec
	return in
}

// offers returns the plugins a distribution offers. With loose set (load
// by explicit request), a top-level package with a skills/ directory is
// offered even without a declaration.
func (p *PM) offers(ctx context.Context, in installed, loose bool) []protocol.Offer {
	var out []protocol.Offer
	// A source tree (editable install, local directory) may declare
	// [tool.symposium] in its pyproject.toml.
	if in.source != "" && p.allowedRoot(ctx, in, in.source) {
		if o, ok := p.sourceTreeOffer(ctx, in); ok {
			return []protocol.Offer{o}
		}
	}
	var eps []pydist.EntryPoint
	var tops []string
	if in.distInfo != "" {
		in.rec.Observe(filepath.Join(in.distInfo, "entry_points.txt"))
		data, err := pkgfile.ReadFile(in.distInfo, "entry_points.txt", pkgfile.MaxManifest)
		switch {
		case err == nil:
			groups, err := pydist.ParseEntryPoints(data)
			if err != nil {
				epf := filepath.Join(in.distInfo, "entry_points.txt")
				msg, line := placedProblem(err)
				p.warn(ctx, pmserver.Diagnostic{Message: msg + "; the entry points it declares are ignored", File: epf, Line: line, Package: idRef(in.id)},
					"ignoring entry points", "id", in.id, "err", err)
			}
			eps = groups[EntryPointGroup]
		case !errors.Is(err, fs.ErrNotExist):
			epf := filepath.Join(in.distInfo, "entry_points.txt")
			p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("entry_points.txt cannot be read (%v); the entry points it declares are ignored", err), File: epf, Package: idRef(in.id)},
				"ignoring entry points", "id", in.id, "err", err)
		}
		tops = p.topLevel(ctx, in.id, in.distInfo, in.rec)
	}
	var topDirs []string
	for _, t := range tops {
		if d := filepath.Join(in.site, t); in.rec.ObserveDir(d) {
			topDirs = append(topDirs, d)
		}
	}
	if in.distInfo == "" && in.source != "" {
		// An sdist or source tree: its packages are its directories (or
		// those under src/).
		for _, base := range []string{in.source, filepath.Join(in.source, "src")} {
			in.rec.ObserveDir(base)
			for _, e := range listDir(base) {
				d := filepath.Join(base, e)
				if isDir(d) && !strings.HasPrefix(e, ".") && e != "src" {
					topDirs = append(topDirs, d)
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, ep := range eps {
		dir, ok := p.packageDir(in, ep.Module())
		if !ok {
			p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("entry point %s:%s = %q names no package directory of the distribution; it offers no plugin", EntryPointGroup, ep.Name, ep.Value),
				File: filepath.Join(in.distInfo, "entry_points.txt"), Package: idRef(in.id)},
				"entry point names no package directory", "id", in.id, "entry_point", ep.Name, "value", ep.Value)
			continue
		}
		if seen[dir] {
			continue
		}
		seen[dir] = true
		if !p.allowedRoot(ctx, in, dir) {
			continue
		}
		name := in.id.Name
		if len(eps) > 1 {
			name = ep.Name
		}
		if o, ok := p.dirOffer(ctx, in, name, dir, "entry point "+EntryPointGroup+":"+ep.Name); ok {
			out = append(out, o)
		}
	}
	if len(out) > 0 {
		return out
	}
	// No entry point: a SYMPOSIUM.toml in a top-level package offers it
	// (and, when loading on request, a skills/ directory).
	for _, dir := range topDirs {
		in.rec.ObserveDir(dir)
		in.rec.Observe(filepath.Join(dir, ManifestFile))
		_, err := os.Lstat(filepath.Join(dir, ManifestFile))
		if err != nil && !(loose && skilltree.Embeds(dir)) {
			continue
		}
		if !p.allowedRoot(ctx, in, dir) {
			continue
		}
		if o, ok := p.dirOffer(ctx, in, in.id.Name, dir, filepath.Base(dir)); ok {
			out = append(out, o)
		}
	}
	return out
}

// packageDir resolves an import package ("a.b") to its directory.
func (p *PM) packageDir(in installed, module string) (string, bool) {
	rel, ok := pydist.ModuleDir(module)
	if !ok {
		return "", false
	}
	roots := []string{in.site}
	if in.source != "" {
		roots = append([]string{in.source, filepath.Join(in.source, "src")}, roots...)
	}
	for _, r := range roots {
		if r == "" {
			continue
		}
		dir := filepath.Join(r, rel)
		if in.rec.ObserveDir(dir) {
			return dir, true
		}
	}
	return "", false
}

// dirOffer builds the offer for a plugin rooted at dir: a SYMPOSIUM.toml
// there is the one declared layer, merged over the defaults.
func (p *PM) dirOffer(ctx context.Context, in installed, name, dir, what string) (protocol.Offer, bool) {
	var layers []manifest.Layer
	in.rec.ObserveDir(dir)
	tbl, ok, refused := p.readTOML(ctx, in.id, dir, in.rec)
	if refused {
		return protocol.Offer{}, false
	}
	if ok {
		layers = append(layers, manifest.Layer{Source: what + " " + ManifestFile, Table: tbl})
	}
	o, ok := p.buildOffer(ctx, in.id, name, dir, layers)
	if ok {
		p.announceEditable(ctx, in, dir)
	}
	return o, ok
}

// announceEditable states, on stderr at warning level (shown by default),
// that an offer's root is in the project directory of an editable install
// rather than in site-packages.
func (p *PM) announceEditable(ctx context.Context, in installed, root string) {
	if !in.editable || in.source == "" {
		return
	}
	if rel, err := filepath.Rel(in.source, root); err != nil || !(rel == "." || filepath.IsLocal(rel)) {
		return
	}
	p.log.Warn("offering a plugin from the project directory of an editable install, outside site-packages", "id", in.id, "root", root, "project", in.source)
	pmserver.Info(ctx, pmserver.Diagnostic{Message: fmt.Sprintf(
		"the plugin of %s is offered from %s, the project directory of an editable install outside site-packages %s; believed because direct_url.json says so and the distribution's RECORD installs %s, which points there",
		in.id, root, in.site, cmp.Or(in.editableVia, "a .pth file or __editable__ finder")), Package: idRef(in.id)})
}

// listedProject reports whether dir is the workspace or one of its
// members, whose pyproject.toml list_deps reads and reports when it does
// not parse. What it reads is recorded in rec.
func (p *PM) listedProject(dir string, rec *depcache.Recorder) bool {
	if dir == p.ws {
		return true
	}
	root := filepath.Join(p.ws, "pyproject.toml")
	data, err := rec.ReadFile(root, pkgfile.MaxManifest)
	if err != nil {
		return false
	}
	proj, err := pyproject.Parse(data)
	if err != nil {
		return false
	}
	r := &resolver{pm: p}
	members := r.members(proj)
	rec.Merge(&r.rec)
	return slices.Contains(members, dir)
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

func (p *PM) sourceTreeOffer(ctx context.Context, in installed) (protocol.Offer, bool) {
	var layers []manifest.Layer
	in.rec.ObserveDir(in.source)
	in.rec.Observe(filepath.Join(in.source, "pyproject.toml"))
	if data, ok := p.readTreeProject(ctx, in.source, idRef(in.id), "its [tool.symposium] is ignored"); ok {
		proj, err := pyproject.Parse(data)
		switch {
		case err != nil && p.listedProject(in.source, in.rec):
			// list_deps reports it: once is enough.
			p.log.Debug("ignoring pyproject.toml of source tree", "dir", in.source, "err", err)
		case err != nil:
			pp := filepath.Join(in.source, "pyproject.toml")
			msg, line := placedProblem(err)
			p.warn(ctx, pmserver.Diagnostic{Message: msg + "; its [tool.symposium] is ignored", File: pp, Line: line, Package: idRef(in.id)},
				"ignoring pyproject.toml of source tree", "dir", in.source, "err", err)
		case proj.Symposium != nil:
			layers = append(layers, manifest.Layer{Source: "pyproject.toml [tool.symposium]", Table: proj.Symposium})
		}
	}
	tbl, ok, refused := p.readTOML(ctx, in.id, in.source, in.rec)
	if refused {
		return protocol.Offer{}, false
	}
	if ok {
		layers = append(layers, manifest.Layer{Source: ManifestFile, Table: tbl})
	}
	if len(layers) == 0 {
		return protocol.Offer{}, false
	}
	o, ok := p.buildOffer(ctx, in.id, in.id.Name, in.source, layers)
	if ok {
		p.announceEditable(ctx, in, in.source)
	}
	return o, ok
}

// readTOML reads the SYMPOSIUM.toml of the plugin rooted at dir, when it
// is a regular file inside dir (no link out of it, never a FIFO or a
// device) of at most pkgfile.MaxManifest (1 MiB). One that breaks these
// rules is refused (the package is not offered) with a warning naming the
// package; one that does not decode is dropped with a warning; an absent
// one silently.
func (p *PM) readTOML(ctx context.Context, id protocol.PackageID, dir string, rec *depcache.Recorder) (tbl map[string]any, ok, refused bool) {
	rec.Observe(filepath.Join(dir, ManifestFile))
	data, err := pkgfile.ReadFile(dir, ManifestFile, pkgfile.MaxManifest)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, false, false
		}
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("%s cannot be read safely (%v); the package is not offered", ManifestFile, err),
			File: filepath.Join(dir, ManifestFile), Package: idRef(id)},
			"not offering a package whose manifest cannot be read safely", "id", id, "err", err)
		return nil, false, true
	}
	path := filepath.Join(dir, ManifestFile)
	if err := tomlfile.Unmarshal(path, data, &tbl); err != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("%s is not valid TOML; it is ignored: %v", ManifestFile, err), File: path, Package: idRef(id)},
			"ignoring malformed manifest", "id", id, "err", err)
		return nil, false, false
	}
	return tbl, true, false
}

func (p *PM) buildOffer(ctx context.Context, id protocol.PackageID, name, dir string, layers []manifest.Layer) (protocol.Offer, bool) {
	m, problems := manifest.Embedded(name, layers...)
	for _, e := range problems {
		p.warn(ctx, pmserver.Diagnostic{Message: e.Error(), Package: idRef(id)},
			"dropping a manifest layer", "id", id, "err", e)
	}
	if m == nil {
		return protocol.Offer{}, false
	}
	wire, err := m.WireJSON()
	if err != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("cannot encode the plugin manifest (%v); no plugin is offered", err), Package: idRef(id)},
			"cannot encode manifest", "id", id, "err", err)
		return protocol.Offer{}, false
	}
	return protocol.Offer{ID: id, Root: dir, Manifest: wire}, true
}

// topLevel lists a distribution's top-level import packages, from RECORD or
// top_level.txt (sdk/pydist, as symposium-pm validate reads them), and
// warns about either file when it exists and cannot be read.
func (p *PM) topLevel(ctx context.Context, id protocol.PackageID, distInfo string, rec *depcache.Recorder) []string {
	rec.Observe(filepath.Join(distInfo, pydist.RecordFile))
	rec.Observe(filepath.Join(distInfo, pydist.TopLevelFile))
	t := pydist.ReadTopLevel(distInfo)
	if t.RecordErr != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("RECORD cannot be read (%v); the distribution's top-level packages are taken from top_level.txt", t.RecordErr),
			File: filepath.Join(distInfo, pydist.RecordFile), Package: idRef(id)},
			"ignoring RECORD", "id", id, "err", t.RecordErr)
	}
	if t.TopLevelErr != nil {
		p.warn(ctx, pmserver.Diagnostic{Message: fmt.Sprintf("top_level.txt cannot be read (%v); no top-level package is looked at for a plugin", t.TopLevelErr),
			File: filepath.Join(distInfo, pydist.TopLevelFile), Package: idRef(id)},
			"ignoring top_level.txt", "id", id, "err", t.TopLevelErr)
	}
	return t.Names
}
