package pypipm

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-pypi/simpleapi"
	"github.com/symposium-dev/symposium-pm/pm-pypi/wheel"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
	"github.com/symposium-dev/symposium-pm/sdk/redact"
	"github.com/symposium-dev/symposium-pm/sdk/verifiedtree"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// MaxDownload bounds one distribution file.
const MaxDownload = 1 << 30

// LoadPlugin resolves id, obtains the distribution (installed copy, cache,
// then the index) and returns the plugins it offers. A distribution that
// declares none but has a top-level package with skills/ is offered with the
// default manifest; one with neither yields no offers.
func (p *PM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	in, err := p.obtain(ctx, id, protocol.UpdateCheck, true)
	if err != nil {
		return nil, err
	}
	offers := p.offers(ctx, in, true)
	if offers == nil {
		offers = []protocol.Offer{}
	}
	return offers, nil
}

// Fetch acquires id's distribution and reports the exact id and where its
// files are: the site-packages directory of an installed copy, or the
// unpacked wheel (or sdist) in the cache.
func (p *PM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	if update == "" {
		update = protocol.UpdateCheck
	}
	if !update.Valid() {
		return protocol.FetchResult{}, protocol.NewError(protocol.CodeInvalidParams, nil, "unknown update level %q", update)
	}
	in, err := p.obtain(ctx, id, update, update != protocol.UpdateFetch)
	if err != nil {
		return protocol.FetchResult{}, err
	}
	root := in.site
	if in.distInfo == "" && in.source != "" {
		root = in.source
	}
	return protocol.FetchResult{ID: in.id, Root: root}, nil
}

// obtain finds or acquires a distribution for id. With local set, an
// installed or cached copy satisfying the requirement is used without the
// network.
func (p *PM) obtain(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel, local bool) (installed, error) {
	name, req, err := checkID(id)
	if err != nil {
		return installed{}, err
	}
	if local {
		if env := p.environment(); env != nil {
			if d, ok := env.Lookup(name); ok && matches(req, d.Version) {
				return p.fromDist(ctx, d.Name, d.Version, d.Site, d.DistInfo, nil), nil
			}
		}
		if _, exact := exactPin(req); exact && update != protocol.UpdateNone {
			// An exact pin is immutable on one index: a tree this index
			// configuration verified is served without asking it again.
			// One another configuration verified is not: the index may
			// publish another file under that name and version. "check"
			// with a range asks the index whether something newer
			// satisfies it.
			if in, ok := p.cachedDist(name, req, nil); ok {
				return in, nil
			}
		}
	}
	if update == protocol.UpdateNone {
		// Only what the configured indexes verified: a tree another
		// index configuration verified may be a squatter's file.
		if in, ok := p.cachedDist(name, req, nil); ok {
			return in, nil
		}
		return installed{}, protocol.ErrOffline(id)
	}
	in, err := p.download(ctx, id, name, req, update == protocol.UpdateFetch)
	if err != nil && update == protocol.UpdateCheck && protocol.CodeOf(err) == protocol.CodeRegistry {
		// The index could not say whether something newer exists: what
		// this index configuration verified still satisfies the
		// requirement.
		if cached, ok := p.cachedDist(name, req, nil); ok {
			p.log.Warn("package index unreachable; serving the cached copy", "id", cached.id, "err", err)
			return cached, nil
		}
	}
	return in, err
}

// The unpacked distributions are cached by the sha256 of the file they
// came from, under <cache_dir>/pypi/unpacked/<name>/<version>/:
//
//   - <sha256>/ is the tree unpacked from the file with that sha256 (a
//     wheel's files; an sdist's top directory inside it), published whole
//     (atomicfile.PublishDir) once the file matched the sha256 its index
//     published and unpacked safely, and never changed after (only
//     update "fetch" swaps in the same file unpacked again);
//   - index-<key> holds the sha256 that the index configuration <key>
//     (indexKey) last gave for the version and had verified.
//
// One host cache serves workspaces configured for different indexes, and
// two indexes may publish different files under one name and version (a
// private package and a public one that took its name): each file keeps
// its own tree, so a root handed out is never replaced by another index's
// file, and "check" serves a tree only when it is the one whose sha256 the
// configured index publishes now. What never goes online (fetch "none",
// active_plugins) serves only the tree the configured indexes' pointer
// names: one they verified. The pointer files are written atomically
// beside the trees, never into one, and read bounded (verifiedtree). A
// "latest" pointer earlier versions wrote (the sha256 verified last, by
// any index configuration) is not read.
// The layout before this one (dist/<name>/<version>/, with no record of
// the file's sha256) is not read: its entries are misses.
const (
	unpackedDir = "unpacked"
	// indexPointerPrefix starts the name of an index configuration's
	// pointer file.
	indexPointerPrefix = "index-"
)

// versionDir is where the trees of name@version live in the cache.
func (p *PM) versionDir(name, version string) string {
	return filepath.Join(p.cache, unpackedDir, name, version)
}

// treeDir is where the file with sha256 sum of name@version is unpacked.
func (p *PM) treeDir(name, version, sum string) string {
	return filepath.Join(p.versionDir(name, version), sum)
}

// validSHA256 reports whether s is a sha256 written as 64 lower-case hex
// digits (the simple API client lower-cases them), so that a digest from
// the index can name a directory.
func validSHA256(s string) bool {
	if len(s) != sha256.Size*2 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// indexKey names the configured indexes (primary first, credentials left
// out: verifiedtree.ScopeKey) in the cache's pointer files. Reading the
// configuration reads files only, never the network. Each pip
// configuration file consulted (read or absent) is recorded in rec: a
// choice derived from the key is stale once one changes. The environment
// the configuration was read from is not recorded: active_plugins keys
// its answers on it (offersContext).
func (p *PM) indexKey(rec *depcache.Recorder) string {
	p.indexClient()
	for _, f := range p.indexCfg.Consulted {
		rec.Observe(f)
	}
	return verifiedtree.ScopeKey(append([]string{p.indexCfg.Index}, p.indexCfg.Extra...)...)
}

// indexPointer is the name of the pointer file of the configured indexes
// (see unpackedDir), recording in rec what it was derived from (indexKey).
func (p *PM) indexPointer(rec *depcache.Recorder) string {
	return indexPointerPrefix + p.indexKey(rec)
}

// cachedDist returns the greatest cached distribution of name satisfying
// req whose tree the configured indexes verified: the one their pointer
// file names. It reads files only, and records what it read in rec: the
// name's and each version's listing, each pointer file (present or not),
// the trees it looked into and the pip configuration files (indexKey).
func (p *PM) cachedDist(name, req string, rec *depcache.Recorder) (installed, bool) {
	base := filepath.Join(p.cache, unpackedDir, name)
	rec.ObserveDir(base)
	var cands []string
	for _, v := range listDir(base) {
		if strings.HasPrefix(v, ".") {
			continue
		}
		if matches(req, v) {
			cands = append(cands, v)
		}
	}
	if len(cands) == 0 {
		return installed{}, false
	}
	versions.Sort(versions.PEP440, cands)
	ptr := p.indexPointer(rec)
	for i := len(cands) - 1; i >= 0; i-- {
		if in, ok := p.cachedVersion(name, cands[i], ptr, rec); ok {
			return in, true
		}
	}
	return installed{}, false
}

// cachedVersion returns the tree of name@version that the pointer file
// ptr names.
func (p *PM) cachedVersion(name, version, ptr string, rec *depcache.Recorder) (installed, bool) {
	dir := p.versionDir(name, version)
	// Its stamp changes when a pointer file is written (renamed into it).
	if !rec.ObserveDir(dir) {
		return installed{}, false
	}
	tree, ok := verifiedtree.Lookup(rec, dir, ptr, validSHA256)
	if !ok {
		return installed{}, false
	}
	return p.tree(name, version, filepath.Base(tree), rec)
}

// recordVerified writes the pointer file saying that the configured
// indexes gave sum for name@version. A pointer that cannot be written
// costs a question to the index later, not an error now.
func (p *PM) recordVerified(name, version, sum string) {
	// An unchanged pointer is not written: answers persisted from it stay
	// valid.
	if _, err := verifiedtree.Write(p.versionDir(name, version), p.indexPointer(nil), sum); err != nil {
		p.log.Debug("cannot record the verified sha256 of a cached distribution", "err", err)
	}
}

// tree describes the tree unpacked from the file of name@version with
// sha256 sum.
func (p *PM) tree(name, version, sum string, rec *depcache.Recorder) (installed, bool) {
	dir := p.treeDir(name, version, sum)
	rec.ObserveDir(dir)
	in := installed{id: pkgID(name, version), site: dir, rec: rec}
	for _, e := range listDir(dir) {
		if strings.HasSuffix(e, ".dist-info") {
			in.distInfo = filepath.Join(dir, e)
			return in, true
		}
	}
	// An sdist: one directory holding PKG-INFO.
	for _, e := range listDir(dir) {
		rec.Observe(filepath.Join(dir, e, "PKG-INFO"))
		if _, err := os.Stat(filepath.Join(dir, e, "PKG-INFO")); err == nil {
			in.source = filepath.Join(dir, e)
			return in, true
		}
	}
	return installed{}, false
}

// candidate is one downloadable file for a version.
type candidate struct {
	version string
	file    simpleapi.File
	rank    int // 0 py3-none-any, 1 other pure, 2 platform wheel, 3 sdist
}

// pick chooses the version and file for req among a project's files:
// PEP 440 selection (pre-releases only when named or nothing else
// matches), yanked files only for an exact pin, wheels before sdists.
//
// pyver is the target Python's version (the project virtualenv's), or "":
// files whose Requires-Python excludes it are skipped, as pip does.
func pick(name, req, pyver string, files []simpleapi.File) (candidate, bool, error) {
	pin, exact := exactPin(req)
	byVersion := map[string][]candidate{}
	var all []string
	for _, f := range files {
		c := candidate{file: f}
		if dist, v, tags, ok := wheel.ParseFilename(f.Filename); ok {
			if pyname.Normalize(dist) != name {
				continue
			}
			c.version, c.rank = v, wheel.Rank(tags)
		} else if dist, v, ok := wheel.ParseSdistFilename(f.Filename); ok && pyname.Normalize(dist) == name {
			c.version, c.rank = v, 3
		} else {
			continue
		}
		cv, err := versions.CanonicalPEP440(c.version)
		if err != nil {
			continue
		}
		c.version = cv
		if f.Yanked && !(exact && cv == pin) {
			continue
		}
		if pyver != "" && f.RequiresPython != "" {
			ok, err := versions.FilterPEP440(f.RequiresPython, []string{pyver}, true)
			if err == nil && len(ok) == 0 {
				continue
			}
		}
		if _, ok := byVersion[cv]; !ok {
			all = append(all, cv)
		}
		byVersion[cv] = append(byVersion[cv], c)
	}
	best, ok, err := versions.SelectPEP440(req, all, false)
	if err != nil || !ok {
		return candidate{}, false, err
	}
	cs := byVersion[best]
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].rank < cs[j].rank })
	return cs[0], true, nil
}

// download resolves id against the index, downloads the chosen file,
// verifies its sha256 and unpacks it into the cache.
func (p *PM) download(ctx context.Context, id protocol.PackageID, name, req string, force bool) (installed, error) {
	client := p.indexClient()
	proj, err := client.Project(ctx, name)
	if err != nil {
		return installed{}, p.indexError(id, err)
	}
	c, ok, err := pick(name, req, p.pythonVersion(), proj.Files)
	if err != nil {
		return installed{}, protocol.ErrForeignID(id, "%s: bad version requirement: %v", id, err)
	}
	if !ok {
		return installed{}, protocol.ErrNotFound(id, "%s: no release of %q on %s satisfies %q", id, name,
			redact.URL(p.indexCfg.Index), displayReq(req))
	}
	exact := pkgID(name, c.version)
	want := c.file.SHA256
	if want == "" {
		return installed{}, protocol.ErrIntegrity(exact, "a sha256 published by the index", "none (the index publishes no hash for "+c.file.Filename+")")
	}
	if !validSHA256(want) {
		return installed{}, protocol.ErrIntegrity(exact, "a sha256 published by the index", fmt.Sprintf("%.80q (not a sha256, for %s)", want, c.file.Filename))
	}
	unlock := p.lock(name + "@" + c.version)
	defer unlock()
	if !force {
		// Only the tree of the very file the index publishes now: not one
		// unpacked from another index's file of that name and version.
		if in, ok := p.tree(name, c.version, want, nil); ok {
			p.recordVerified(name, c.version, want)
			return in, nil
		}
	}
	what := "fetching " + exact.String()
	tmpDir := filepath.Join(p.cache, "tmp")
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return installed{}, protocol.ErrResource(what, err)
	}
	p.sweepStale(tmpDir, "download-")
	createTemp := os.CreateTemp
	if p.createTemp != nil {
		createTemp = p.createTemp
	}
	tmp, err := createTemp(tmpDir, "download-*-"+safeBase(c.file.Filename))
	if err != nil {
		return installed{}, protocol.ErrResource(what, err)
	}
	defer func() {
		tmp.Close()
		os.Remove(tmp.Name())
	}()
	p.log.Debug("downloading", "id", exact, "url", redact.URL(c.file.URL))
	sum, err := client.Download(ctx, c.file, tmp, MaxDownload)
	if err != nil {
		var re *simpleapi.RegistryError
		switch {
		case errors.As(err, &re):
			return installed{}, p.indexError(exact, err)
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return installed{}, err
		case protocol.IsResource(err):
			return installed{}, protocol.ErrResource(what, err)
		}
		return installed{}, protocol.ErrInvalidContent(exact, err.Error())
	}
	if sum != want {
		return installed{}, protocol.ErrIntegrity(exact, "sha256:"+want, "sha256:"+sum)
	}
	dest := p.treeDir(name, c.version, want)
	// Unpack from the open download (still readable when the cache
	// directory was removed meanwhile) into a staging tree under tmp
	// (nothing appears under unpacked/ unless everything succeeds); when the
	// cache directory vanished, the directories are made again once.
	var info *wheel.Info
	var stage string
	for attempt := 0; ; attempt++ {
		stage, info, err = p.unpack(ctx, tmp, c, tmpDir)
		if err == nil || archive.IsContent(err) || attempt == 1 || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		p.log.Warn("the cache directory vanished while unpacking; trying again", "id", exact, "err", err)
	}
	if stage != "" {
		defer os.RemoveAll(stage)
	}
	if err != nil {
		switch {
		case archive.IsContent(err):
			return installed{}, protocol.ErrInvalidContent(exact, err.Error())
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return installed{}, err
		}
		return installed{}, protocol.ErrResource(what, err)
	}
	if info.Metadata.Normalized() != name || canon(info.Metadata.Version) != c.version {
		return installed{}, protocol.ErrInvalidContent(exact, "the archive's metadata names "+info.Metadata.Name+" "+info.Metadata.Version)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return installed{}, protocol.ErrResource(what, err)
	}
	// A pointer file's temporary left by a process killed mid-write
	// (.tmp-*).
	p.sweepStale(filepath.Dir(dest), ".")
	if err := swapInto(stage, dest, force); err != nil {
		return installed{}, protocol.ErrResource(what, err)
	}
	in, ok := p.tree(name, c.version, want, nil)
	if !ok {
		return installed{}, protocol.ErrInvalidContent(exact, "unpacked distribution has no metadata")
	}
	p.recordVerified(name, c.version, want)
	return in, nil
}

// unpack extracts the downloaded archive f (a wheel, or an sdist for
// rank 3) into a new staging directory under tmpDir, which it makes when
// missing, and returns the staging directory and what the archive holds.
func (p *PM) unpack(ctx context.Context, f *os.File, c candidate, tmpDir string) (string, *wheel.Info, error) {
	if err := os.MkdirAll(tmpDir, 0o755); err != nil {
		return "", nil, err
	}
	p.sweepStale(tmpDir, ".")
	stage, err := os.MkdirTemp(tmpDir, "."+safeBase(c.file.Filename)+"-")
	if err != nil {
		return "", nil, err
	}
	os.Remove(stage)
	var info *wheel.Info
	if c.rank == 3 {
		info, err = wheel.ExtractSdistFile(ctx, f, c.file.Filename, stage, archive.DefaultLimits)
	} else {
		info, err = wheel.ExtractWheelFile(ctx, f, c.file.Filename, stage, archive.DefaultLimits)
	}
	return stage, info, err
}

// swapInto moves the finished tree stage to dest. When dest already exists
// (another process unpacked the same file meanwhile: dest is named by its
// sha256) it is kept, since roots handed out must stay valid, unless
// replace asks to re-acquire.
func swapInto(stage, dest string, replace bool) error {
	if !replace {
		_, err := atomicfile.PublishDir(stage, dest)
		return err
	}
	if err := atomicfile.SwapDir(stage, dest); err != nil {
		return err
	}
	return os.RemoveAll(stage) // the replaced tree, or nothing
}

// staleAfter is the age past which a temporary download or staging tree
// is known to be abandoned by a killed process: a live download rewrites its
// file at least this often (the HTTP client gives up after five minutes),
// unpacking takes seconds, and unlinking what another process still holds
// open is harmless on Unix.
const staleAfter = 10 * time.Minute

// sweepStale removes the entries of dir named with prefix (partial
// downloads, staging trees) that are older than staleAfter.
func (p *PM) sweepStale(dir, prefix string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), prefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			path := filepath.Join(dir, e.Name())
			p.log.Debug("removing what a killed process abandoned", "path", path)
			os.RemoveAll(path)
		}
	}
}

func safeBase(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == 0 {
			return '_'
		}
		return r
	}, name)
}

func displayReq(req string) string {
	if req == "" {
		return protocol.AnyVersion
	}
	return req
}

// indexError maps a simple API failure to a protocol error.
func (p *PM) indexError(id protocol.PackageID, err error) error {
	var nf *simpleapi.NotFoundError
	if errors.As(err, &nf) {
		return protocol.ErrNotFound(id, "%s: no project named %q on %s", id, id.Name, redact.URL(p.indexCfg.Index))
	}
	var re *simpleapi.RegistryError
	if errors.As(err, &re) {
		return protocol.ErrRegistry(&id, re.URL, re.Status, "%s: package index failed: %v", id, re)
	}
	return err
}
