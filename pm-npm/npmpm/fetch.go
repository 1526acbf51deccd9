package npmpm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/packagejson"
	"github.com/symposium-dev/symposium-pm/pm-npm/registry"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/atomicfile"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/verifiedtree"
	"github.com/symposium-dev/symposium-pm/sdk/versions"
)

// candidate is a copy of a package available without the network.
type candidate struct {
	version string
	root    string
	pkg     *packagejson.Manifest // its package.json, when already read
	// installerOwned marks an installed copy its installer's record stands
	// for: its files are not stamped one by one (see installrecord.go).
	installerOwned bool
}

// The unpacked tarballs are cached under
// <cache_dir>/npm/unpacked/<name>/<version>/ (the name path-escaped, the
// version canonical, registry.CanonicalVersion):
//
//   - <digest>/ (registry.DigestKey: "sha512-<hex>") is the tree unpacked
//     from the tarball with that digest, published whole
//     (atomicfile.PublishDir) once the tarball matched the integrity its
//     packument gave and unpacked cleanly, and never changed after;
//   - registry-<hash> (registryPointer) is a file naming the digest of the
//     tree that registry last verified for this version, written
//     atomically once the tree is in place and read bounded
//     (verifiedtree).
//
// One host cache serves workspaces configured for different registries,
// and two registries may publish different tarballs under one name and
// version (a private package and a public one that took its name): each
// tarball keeps its own tree. fetch with update "check" serves a cached
// tree only under a digest the packument the configured registry gives
// now names (registry.DigestKeys), and "fetch" publishes the tree of the
// tarball it has just verified. What never goes online (fetch "none", load_plugin
// before it fetches, active_plugins) serves the tree the configured
// registry's pointer names: one that registry verified. The layout before
// this one (pkg/<name>/<version>/, with no record of its tarball's digest)
// is not read: its entries are misses.
const (
	unpackedDir = "unpacked"
	// registryPointerPrefix starts the name of a registry's pointer file.
	registryPointerPrefix = "registry-"
)

// versionDir is where the trees of name@version (version canonical) are
// cached.
func (p *PM) versionDir(name, version string) string {
	return filepath.Join(p.cacheRoot, unpackedDir, url.PathEscape(name), version)
}

// registryPointer returns the name of the pointer file of the registry
// the configuration sends name to: a digest of its URL without
// credentials (verifiedtree.ScopeKey). Each configuration file consulted
// is recorded in rec (an answer derived from the pointer is stale once one
// changes); the environment is not.
func (p *PM) registryPointer(rec *depcache.Recorder, name string) string {
	cfg := p.npmConfig()
	for _, f := range cfg.Consulted {
		rec.Observe(f)
	}
	return registryPointerPrefix + verifiedtree.ScopeKey(cfg.Registry(name))
}

// recordVerified writes the configured registry's pointer file of
// name@version, naming the tree with digest key, which that registry has
// just verified. A pointer that cannot be written costs a question to the
// registry later (offline lookups miss), not an error now.
func (p *PM) recordVerified(name, version, key string) {
	dir := p.versionDir(name, version)
	wrote, err := verifiedtree.Write(dir, p.registryPointer(nil, name), key)
	if err != nil {
		p.log.Warn("cannot record the verified digest of a cached package; it will be checked with the registry again", "package", name, "version", version, "err", err)
		return
	}
	if !wrote {
		return // unchanged: answers persisted from it stay valid
	}
	// Temporaries of pointers a killed process was writing.
	sweepTemps(dir, p.log)
}

// installedCopies returns the copies of name installed under the
// node_modules directories of pd (from installedParents, shared with
// active_plugins), nearest first: in an entry of its name, or in one the
// project declares for it (an alias's) whose package.json names it. Each
// real directory is returned once.
func (p *PM) installedCopies(pd parentDirs, name string) []candidate {
	var out []candidate
	seen := map[string]bool{}
	entries := pd.entries(name)
	for _, d := range pd.dirs {
		for _, e := range entries {
			dir := filepath.Join(d, "node_modules", filepath.FromSlash(e))
			pkg, err := packagejson.ReadPackage(dir)
			if err != nil || !holds(e, pkg.Name, name) {
				continue
			}
			version, ok := registry.CanonicalVersion(pkg.Version)
			if !ok {
				continue
			}
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			if seen[dir] {
				continue
			}
			seen[dir] = true
			out = append(out, candidate{version: version, root: dir})
		}
	}
	return out
}

// cachedCopies returns the unpacked tarballs of name in the cache that
// the configured registry verified (see unpackedDir), one per version. It
// reads files only. What it reads is recorded in rec: the name's listing,
// each version's pointer file (present or not), each tree served and the
// npm configuration files.
func (p *PM) cachedCopies(rec *depcache.Recorder, name string) []candidate {
	if p.cacheRoot == "" {
		return nil
	}
	base := filepath.Join(p.cacheRoot, unpackedDir, url.PathEscape(name))
	rec.ObserveDir(base)
	ents, err := os.ReadDir(base)
	if err != nil {
		return nil
	}
	var out []candidate
	ptr := ""
	for _, e := range ents {
		if c, ok := registry.CanonicalVersion(e.Name()); !ok || c != e.Name() || !e.IsDir() {
			continue
		}
		if ptr == "" {
			ptr = p.registryPointer(rec, name)
		}
		root, ok := verifiedtree.Lookup(rec, filepath.Join(base, e.Name()), ptr, registry.ValidDigestKey)
		if !ok {
			continue
		}
		out = append(out, candidate{version: e.Name(), root: root})
	}
	return out
}

// resolveLocal picks, among installed and cached copies, the best one for
// req: an exact version, a range (highest match), "latest" or "*" (highest
// release). Other dist-tags cannot be resolved offline.
func (p *PM) resolveLocal(name, req string) (candidate, bool) {
	req = strings.TrimSpace(req)
	if req == "" || req == "latest" {
		req = protocol.AnyVersion
	}
	if _, err := versions.NPM.Matches(req, "0.0.0"); err != nil {
		return candidate{}, false
	}
	cands := append(p.installedCopies(p.installedParents(nil), name), p.cachedCopies(nil, name)...)
	vs := make([]string, 0, len(cands))
	for _, c := range cands {
		vs = append(vs, c.version)
	}
	best, ok, err := versions.Select(versions.NPM, req, vs)
	if err != nil || !ok {
		return candidate{}, false
	}
	for _, c := range cands {
		if c.version == best {
			return c, true
		}
	}
	return candidate{}, false
}

// Fetch implements pmserver.PM.
func (p *PM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	if err := checkID(id); err != nil {
		return protocol.FetchResult{}, err
	}
	if update == "" {
		update = protocol.UpdateCheck
	}
	if !update.Valid() {
		return protocol.FetchResult{}, protocol.NewError(protocol.CodeInvalidParams, nil, "unknown update level %q (want none, check or fetch)", update)
	}
	c, err := p.fetch(ctx, id, update)
	if err != nil {
		return protocol.FetchResult{}, err
	}
	return protocol.FetchResult{ID: protocol.PackageID{PM: Name, Name: id.Name, Version: c.version}, Root: c.root}, nil
}

func (p *PM) fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (candidate, error) {
	if update == protocol.UpdateNone {
		if c, ok := p.resolveLocal(id.Name, id.Version); ok {
			return c, nil
		}
		return candidate{}, protocol.ErrOffline(id)
	}
	if p.cacheRoot == "" {
		return candidate{}, fmt.Errorf("%s: the host gave no cache_dir to download into", id)
	}
	client, err := p.registryClient()
	if err != nil {
		return candidate{}, err
	}
	pack, err := client.Packument(ctx, id.Name)
	if err != nil {
		var he *registry.HTTPError
		if update == protocol.UpdateCheck && errors.As(err, &he) && he.Status == 0 {
			if c, ok := p.resolveLocal(id.Name, id.Version); ok {
				p.log.Warn("registry unreachable; using local copy", "package", id.Name, "version", c.version, "err", err)
				return c, nil
			}
		}
		return candidate{}, p.protoErr(&id, err)
	}
	ver, err := registry.Pick(pack, id.Version)
	if err != nil {
		return candidate{}, p.protoErr(&id, err)
	}
	if c, ok := registry.CanonicalVersion(ver.Version); !ok || c != ver.Version {
		// A dist-tag naming something that is not a version must not
		// become a cache path (Pick answers versions canonical).
		return candidate{}, protocol.ErrNotFound(id, "%s: the registry's version %q is not a semver version", id, ver.Version)
	}
	if update == protocol.UpdateCheck {
		for _, c := range p.installedCopies(p.installedParents(nil), id.Name) {
			if sameVersion(c.version, ver.Version) {
				c.version = ver.Version
				return c, nil
			}
		}
		// Only a tree of a tarball the packument describes now: not one
		// another registry's packument gave under that name and version.
		for _, key := range registry.DigestKeys(ver.Dist) {
			if root := filepath.Join(p.versionDir(id.Name, ver.Version), key); isDir(root) {
				p.recordVerified(id.Name, ver.Version, key)
				return candidate{version: ver.Version, root: root}, nil
			}
		}
	}
	exact := protocol.PackageID{PM: Name, Name: id.Name, Version: ver.Version}
	root, err := p.download(ctx, client, exact, ver)
	if err != nil {
		return candidate{}, p.protoErr(&exact, err)
	}
	return candidate{version: ver.Version, root: root}, nil
}

// download fetches and verifies a version's tarball and unpacks it into
// the cache, under the digest it was verified with (see unpackedDir), and
// records that the configured registry verified it. Nothing reaches the
// final directory unless the checksum matches and the archive unpacks
// cleanly; a concurrent download of the same tarball by another process
// is harmless (the first rename wins, both use its result). A tree already
// cached under the verified digest is the same content and is kept, so
// roots handed out earlier stay valid; a tarball with another digest
// (update "fetch" after the registry's tarball changed) gets a tree of its
// own. Failures of the machine (a full disk, the cache directory removed
// underneath) are -32603 naming the path; when the cache directory
// vanished while the tarball was downloading, the unpacking is tried once
// more from the download already in hand.
func (p *PM) download(ctx context.Context, client *registry.Client, id protocol.PackageID, ver *registry.Version) (string, error) {
	if ver.Dist.Tarball == "" {
		return "", protocol.ErrInvalidContent(id, "the registry lists no tarball for this version")
	}
	what := "fetching " + id.String()
	tmpRoot := filepath.Join(p.cacheRoot, "tmp")
	if err := os.MkdirAll(tmpRoot, 0o755); err != nil {
		return "", protocol.ErrResource(what, err)
	}
	sweepStale(tmpRoot, p.log)
	createTemp := os.CreateTemp
	if p.createTemp != nil {
		createTemp = p.createTemp
	}
	f, err := createTemp(tmpRoot, tempPrefix()+"dl-*.tgz")
	if err != nil {
		return "", protocol.ErrResource(what, err)
	}
	defer func() {
		f.Close()
		os.Remove(f.Name())
	}()
	v := registry.NewVerifier()
	if err := client.Download(ctx, ver.Dist.Tarball, io.MultiWriter(f, v)); err != nil {
		if protocol.IsResource(err) {
			return "", protocol.ErrResource(what, err)
		}
		return "", err
	}
	key, err := v.Verify(ver.Dist)
	if err != nil {
		return "", err
	}
	final := filepath.Join(p.versionDir(id.Name, id.Version), key)
	if isDir(final) {
		p.recordVerified(id.Name, id.Version, key)
		return final, nil
	}
	// The open file stays readable even when its name was removed.
	fi, err := f.Stat()
	if err != nil {
		return "", protocol.ErrResource(what, err)
	}
	var root string
	for attempt := 0; ; attempt++ {
		root, err = p.unpackInto(ctx, f, fi.Size(), id, tmpRoot, final)
		if err == nil || archive.IsContent(err) || attempt == 1 || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		p.log.Warn("the cache directory vanished while unpacking; trying again", "package", id.Name, "version", id.Version, "err", err)
	}
	switch {
	case err == nil:
		p.recordVerified(id.Name, id.Version, key)
		return root, nil
	case archive.IsContent(err):
		return "", protocol.ErrInvalidContent(id, err.Error())
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "", err
	}
	return "", protocol.ErrResource(what, err)
}

// unpackInto unpacks the tarball f (size bytes) into a new directory under
// tmpRoot and renames it to final, recreating the directories it needs.
func (p *PM) unpackInto(ctx context.Context, f *os.File, size int64, id protocol.PackageID, tmpRoot, final string) (string, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmpRoot, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(tmpRoot, tempPrefix()+"x-*")
	if err != nil {
		return "", err
	}
	if err := unpack(ctx, f, size, dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	// When final is already cached (another process won the race with the
	// same tarball), it is kept.
	if _, err := atomicfile.PublishDir(dir, final); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	p.log.Debug("cached package", "package", id.Name, "version", id.Version, "dir", final)
	return final, nil
}

// unpack extracts an npm tarball (entries under one top directory,
// normally "package/", which is stripped; files at the top level are
// dropped, as npm does) into the existing directory dir under the rules
// and caps of sdk/archive.
func unpack(ctx context.Context, r io.Reader, size int64, dir string) error {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	return archive.ExtractTarGz(ctx, r, size, root, archive.Options{Strip: 1})
}

// staleAfter is how old a temporary download must be before any process
// may remove it. A live download writes its file continuously and the
// registry client gives up after ten minutes, so older ones were left by a
// killed process.
const staleAfter = 10 * time.Minute

// tempPrefix starts the name of every temporary file or directory this
// process makes in the cache: "p<pid>-", so that a later process knows
// whose it was.
func tempPrefix() string { return fmt.Sprintf("p%d-", os.Getpid()) }

// sweepStale removes the temporary downloads and unpackings under tmpRoot
// left by killed processes: those of a process that is no longer running,
// and any older than staleAfter. It runs when the PM starts.
func sweepStale(tmpRoot string, log *slog.Logger) {
	ents, err := os.ReadDir(tmpRoot)
	if err != nil {
		return
	}
	for _, e := range ents {
		stale := false
		if pid, ok := tempOwner(e.Name()); ok && pid != os.Getpid() && !processAlive(pid) {
			stale = true
		} else if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			stale = true
		}
		if stale {
			path := filepath.Join(tmpRoot, e.Name())
			log.Debug("removing a temporary file a killed process left", "path", path)
			os.RemoveAll(path)
		}
	}
}

// sweepTemps removes from dir the temporary files atomicfile left there
// (".tmp-*") that are older than staleAfter: pointer files a killed
// process was writing.
func sweepTemps(dir string, log *slog.Logger) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".tmp-") || e.IsDir() {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > staleAfter {
			path := filepath.Join(dir, e.Name())
			log.Debug("removing a temporary file a killed process left", "path", path)
			os.Remove(path)
		}
	}
}

// tempOwner returns the process id in a name made with tempPrefix.
func tempOwner(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "p")
	if !ok {
		return 0, false
	}
	digits, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(digits)
	return pid, err == nil && pid > 0
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
