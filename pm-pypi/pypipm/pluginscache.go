package pypipm

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"

	"github.com/symposium-dev/symposium-pm/pm-pypi/simpleapi"
	"github.com/symposium-dev/symposium-pm/pm-pypi/venv"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// offersCacheKey names the persisted active_plugins answers and versions
// their meaning; bump it whenever what an answer holds or is read from
// changes. Version 4 records the .dist-info directories passed over (see
// venv.Passed); version 5 offers cached copies from the unpacked/ layout
// (fetch.go), so that an answer offering a tree of the earlier dist/ one,
// which no longer counts as cached, is a miss; version 6 offers only the
// cached tree the configured indexes verified (their index-<key> pointer
// file, not the "latest" one), is keyed on the environment the index
// configuration is read from and records the pip configuration files, so
// that an answer offering another index's tree is a miss.
const offersCacheKey = "pypi active_plugins 6"

// offersCache is where active_plugins answers are persisted: nil, which
// stores nothing, when the host gave no cache directory.
func (p *PM) offersCache() *depcache.Cache {
	if !p.cacheSet {
		return nil
	}
	return depcache.New(filepath.Join(p.cache, "active_plugins")).Remembering(&p.verified)
}

// ActivePlugins returns the plugins embedded in the given pypi dependencies,
// as installed in the project's virtualenv (or, for an exact version the
// virtualenv does not hold, as unpacked in the cache). It never uses the
// network.
//
// The answer is persisted (sdk/depcache) keyed on the requested
// dependencies, the virtualenv candidates (VIRTUAL_ENV included) and the
// path and editable dependencies list_deps resolved from the project's
// manifests and lockfiles, and on the stamp of what it was read from: the
// virtualenv's directories and site-packages directories, which stand for
// every distribution an installer wrote there (see owned.go: their files
// are not stamped one by one, only the roots of the plugins they offer);
// for any other distribution (an editable install, a dist-info without
// RECORD) its .dist-info directory and the files read in it (METADATA,
// direct_url.json, entry_points.txt, RECORD, top_level.txt), its top-level
// package directories and their SYMPOSIUM.toml; a .dist-info directory
// named for a dependency but passed over (its METADATA cannot be read or
// names another project) and its METADATA; source trees and their
// pyproject.toml; and cached copies: the name's and version's directories,
// the configured indexes' pointer file (present or not), the tree it names
// and the pip configuration files the choice of indexes was read from
// (simpleapi.Config.Consulted, present or not). A hit costs one stat per
// input. An answer whose computation logged a warning or sent the host a
// diagnostic is not persisted, so the next hook computes it again and
// sends the same diagnostics: a hit never hides one.
//
// Answering a request, the answer is persisted as it is sent, keyed on the
// request's params byte for byte rather than on deps, for ActivePluginsRaw
// to serve with the same stamps; called directly, it is persisted decoded,
// keyed on deps.
func (p *PM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	local, keyCtx := p.offersContext(ctx)
	cache := p.offersCache()
	key := depcache.OffersKey(offersCacheKey, keyCtx, deps)
	// Answering a request, the answer is persisted encoded and looked up by
	// ActivePluginsRaw, which declined: no decoded answer is looked for.
	if pmserver.Params(ctx) == nil {
		if offers, ok := cache.LoadOffers(key, p.log); ok {
			return offers, nil
		}
	}
	var rec depcache.Recorder
	warned, sent := p.warnings.Count(), pmserver.DiagnosticsSent(ctx)
	offers, err := p.computeOffers(ctx, deps, local, &rec)
	if err != nil || cache == nil {
		return offers, err
	}
	if rec.Tainted() || p.warnings.Count() != warned || pmserver.DiagnosticsSent(ctx) != sent {
		p.log.Debug("active_plugins answer not persisted: its computation warned or sent a diagnostic, or an input could not be recorded")
		return offers, nil
	}
	if err := cache.StoreAnswer(ctx, offersCacheKey, keyCtx, deps, rec.Stamps(), offers); err != nil {
		p.log.Debug("cannot persist the active_plugins answer", "err", err)
	}
	return offers, nil
}

// offersContext returns the path and editable dependencies list_deps
// resolved, and the context active_plugins answers' keys name besides the
// request: the workspace, the virtualenv candidates, what the index
// configuration is read from besides the files' contents (which decides
// the cached trees offered: see cachedDist; simpleapi.ConfigSources, one
// stat) and those dependencies. Index URLs, which may hold credentials,
// only enter the key's hash.
func (p *PM) offersContext(ctx context.Context) (map[string]string, []string) {
	local := p.localTrees(ctx)
	keyCtx := append([]string{p.ws}, venv.Candidates(p.ws, p.getenv)...)
	keyCtx = append(keyCtx, "")
	keyCtx = append(keyCtx, simpleapi.ConfigSources(p.getenv)...)
	keyCtx = append(keyCtx, "")
	for _, k := range slices.Sorted(maps.Keys(local)) {
		keyCtx = append(keyCtx, k+"="+local[k])
	}
	return local, keyCtx
}

// ActivePluginsRaw implements pmserver.RawActivePlugins: an active_plugins
// request whose params are byte for byte those of an answer ActivePlugins
// persisted, in the same context, is answered with that answer as it was
// sent, while every input it was read from is unchanged (the same stamps
// as ActivePlugins' own cache). A hit neither decodes the params nor
// decodes and encodes the offers; anything else declines, and the harness
// calls ActivePlugins.
func (p *PM) ActivePluginsRaw(ctx context.Context, params json.RawMessage) (json.RawMessage, bool, error) {
	cache := p.offersCache()
	if cache == nil || params == nil {
		return nil, false, nil
	}
	_, keyCtx := p.offersContext(ctx)
	res, ok := cache.LoadRawOffers(depcache.RawOffersKey(offersCacheKey, keyCtx, params), p.log)
	return res, ok, nil
}

// recordEnvironment records what finding the virtualenv env (nil when
// none was found) read: each candidate directory, its lib and lib64
// listings, and the site-packages directories whose listings
// active_plugins searches.
func (p *PM) recordEnvironment(rec *depcache.Recorder, env *venv.Env) {
	if rec == nil {
		return
	}
	for _, c := range venv.Candidates(p.ws, p.getenv) {
		rec.ObserveDir(c)
		rec.ObserveDir(filepath.Join(c, "lib"))
		rec.ObserveDir(filepath.Join(c, "lib64"))
	}
	if env != nil {
		for _, s := range env.SitePackages {
			rec.ObserveDir(s)
		}
	}
}
