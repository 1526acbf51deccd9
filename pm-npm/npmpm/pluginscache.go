package npmpm

import (
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/pm-npm/npmrc"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// offersCacheKey names the persisted active_plugins answers and versions
// their meaning; bump it whenever what an answer holds or is read from
// changes. Version 8: the keys name the configuration's environment
// (offersContext); version 7 named the registry pointer files by
// verifiedtree.ScopeKey.
const offersCacheKey = "npm active_plugins 8"

// offersContext is what the keys of persisted active_plugins answers name
// besides the request: the workspace, and the environment the npm
// configuration is read from (npmrc.EnvSources), which chooses the registry
// whose verified trees an answer may offer from the PM's cache. The session's
// environment does not change, so it is computed once.
func (p *PM) offersContext() []string {
	p.offersCtxOnce.Do(func() {
		p.offersCtx = append([]string{p.workspace}, npmrc.EnvSources(p.env)...)
	})
	return p.offersCtx
}

// offersCache is where active_plugins answers are persisted, or nil (which
// stores nothing) when the host gave no cache directory.
func (p *PM) offersCache() *depcache.Cache {
	if p.cacheRoot == "" {
		return nil
	}
	return depcache.New(filepath.Join(p.cacheRoot, "active_plugins")).Remembering(&p.verified)
}

// ActivePlugins implements pmserver.PM: for each npm dependency, the copy
// installed where Node resolves it from the project list_deps reads (a
// member's node_modules, one between it and the project root, the root's
// or one above; under an alias's name too), or, failing that, one unpacked
// in the cache, is offered when it embeds a plugin. It never uses the
// network.
//
// The answer is persisted (sdk/depcache) keyed on the requested
// dependencies and on the stamp of what it was read from: each
// node_modules and scope directory listed, the installer's record in each
// (installrecord.go) standing for the packages it installed there, the
// directory of each package offered, and, for content a user edits (a
// link out of node_modules, or a node_modules holding no record), each
// package directory and package.json, SYMPOSIUM.toml (present or not) and
// skills/ tree; what finding the project root read (findProject), the
// root's package.json and pnpm-workspace.yaml, the directories its member
// globs listed and the package.json of each member searched. A hit costs one stat per input
// and opens no package file. An answer whose computation logged a warning or sent the
// host a diagnostic is not persisted, so the next hook computes it again
// and sends the same diagnostics: a hit never hides one.
//
// Answering a request, the answer is persisted as it is sent, keyed on the
// request's params byte for byte rather than on deps, for ActivePluginsRaw
// to serve with the same stamps; called directly, it is persisted decoded,
// keyed on deps.
func (p *PM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	cache := p.offersCache()
	key := depcache.OffersKey(offersCacheKey, p.offersContext(), deps)
	// Answering a request, the answer is persisted encoded and looked up by
	// ActivePluginsRaw, which declined: no decoded answer is looked for.
	if pmserver.Params(ctx) == nil {
		if offers, ok := cache.LoadOffers(key, p.log); ok {
			return offers, nil
		}
	}
	var rec depcache.Recorder
	warned, sent := p.warnings.Count(), pmserver.DiagnosticsSent(ctx)
	offers, err := p.computeOffers(ctx, deps, &rec)
	if err != nil || cache == nil {
		return offers, err
	}
	if rec.Tainted() || p.warnings.Count() != warned || pmserver.DiagnosticsSent(ctx) != sent {
		p.log.Debug("active_plugins answer not persisted: its computation warned or sent a diagnostic, or an input could not be recorded")
		return offers, nil
	}
	if err := cache.StoreAnswer(ctx, offersCacheKey, p.offersContext(), deps, rec.Stamps(), offers); err != nil {
		p.log.Debug("cannot persist the active_plugins answer", "err", err)
	}
	return offers, nil
}

// ActivePluginsRaw implements pmserver.RawActivePlugins: an active_plugins
// request whose params are byte for byte those of an answer ActivePlugins
// persisted is answered with that answer as it was sent, while every input
// it was read from is unchanged (the same stamps as ActivePlugins' own
// cache). A hit neither decodes the params nor decodes and encodes the
// offers; anything else declines, and the harness calls ActivePlugins.
func (p *PM) ActivePluginsRaw(ctx context.Context, params json.RawMessage) (json.RawMessage, bool, error) {
	cache := p.offersCache()
	if cache == nil || params == nil {
		return nil, false, nil
	}
	// A list_deps check running alongside (the hook pipelines both
	// requests) covers the installed package.json files this answer also
	// depends on: once it is done, verified spares their stats.
	p.listCheck.Lock()
	//lint:ignore SA2001 an empty critical section, on purpose: waiting is the point
	p.listCheck.Unlock()
	res, ok := cache.LoadRawOffers(depcache.RawOffersKey(offersCacheKey, p.offersContext(), params), p.log)
	return res, ok, nil
}
