package cargopm

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// offersCacheKey names the persisted active_plugins answers and versions
// their meaning; bump it whenever what an answer holds or is read from
// changes.
const offersCacheKey = "cargo active_plugins 4"

// ActivePlugins offers the plugins embedded in those of deps whose sources
// are on disk: a crate embeds one when it has SYMPOSIUM.toml at its root, a
// [package.metadata.symposium] table in Cargo.toml, or skills/**/SKILL.md.
// It never touches the network.
//
// The answer is persisted (sdk/depcache) keyed on the requested
// dependencies, the workspace, CARGO_HOME and the path dependencies
// list_deps resolved from the manifests and Cargo.lock, and on the stamp
// of what it was read from, stamping what a user edits and trusting what
// cargo owns (trust.go): each cargo configuration file (present or not),
// the workspace's Cargo.lock, each vendored and registry source directory
// listed, and each offer's root; each path dependency's, hand-made
// vendored crate's or incompletely unpacked source's Cargo.toml, marker,
// SYMPOSIUM.toml, skills/ tree and .crate archive; each index cache read.
// A crate cargo vendored (with .cargo-checksum.json) or unpacked (with
// .cargo-ok) is not stamped file by file: cargo never rewrites one in
// place, and its installs and removals change the listing of its
// directory. A hand edit inside one is seen once cargo next changes that
// directory. A hit costs one stat per input. An answer whose computation logged a warning
// or sent the host a diagnostic is not persisted, so the next hook
// computes it again and sends the same diagnostics: a hit never hides one.
//
// Answering a request, the answer is persisted as it is sent, keyed on the
// request's params byte for byte rather than on deps, for ActivePluginsRaw
// to serve with the same stamps; called directly, it is persisted decoded,
// keyed on deps.
func (p *PM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	sess := p.session()
	paths, lock, cache, keyCtx := p.offersCache(ctx)
	key := depcache.OffersKey(offersCacheKey, keyCtx, deps)
	// Answering a request, the answer is persisted encoded and looked up by
	// ActivePluginsRaw, which declined: no decoded answer is looked for.
	if pmserver.Params(ctx) == nil {
		if offers, ok := cache.LoadOffers(key, sess.Logger); ok {
			return offers, nil
		}
	}
	var rec depcache.Recorder
	if lock != "" {
		// It names the source of every locked crate: a vendored git
		// dependency moved to another revision of the same version
		// changes it, not the dependencies asked for.
		rec.Observe(lock)
	}
	warned, sent := p.warnings.Count(), pmserver.DiagnosticsSent(ctx)
	offers, err := p.computeOffers(ctx, deps, paths, &rec)
	if err != nil || cache == nil {
		return offers, err
	}
	if rec.Tainted() || p.warnings.Count() != warned || pmserver.DiagnosticsSent(ctx) != sent {
		sess.Logger.Debug("cargo: active_plugins answer not persisted: its computation warned or sent a diagnostic, or an input could not be recorded")
		return offers, nil
	}
	if err := cache.StoreAnswer(ctx, offersCacheKey, keyCtx, deps, rec.Stamps(), offers); err != nil {
		sess.Logger.Debug("cargo: cannot persist the active_plugins answer", "err", err)
	}
	return offers, nil
}

// offersCache returns the path dependencies list_deps resolved, the
// workspace's Cargo.lock ("" outside a cargo workspace), where
// active_plugins answers are persisted (nil, which stores nothing, without
// a cache directory) and the context their keys name besides the request:
// the workspace, CARGO_HOME and those path dependencies.
func (p *PM) offersCache(ctx context.Context) (map[string]string, string, *depcache.Cache, []string) {
	sess := p.session()
	paths := map[string]string{}
	lock := ""
	if s, err := p.snapshot(ctx, layoutPart); err == nil {
		paths = s.Paths
		if s.Found && s.Root != "" {
			lock = filepath.Join(s.Root, "Cargo.lock")
		}
	}
	var cache *depcache.Cache
	if sess.CacheDir != "" {
		cache = depcache.New(filepath.Join(sess.CacheDir, "cargo", "active_plugins")).Remembering(&p.verified)
	}
	keyCtx := []string{sess.Workspace, p.cargoHome()}
	for _, k := range slices.Sorted(maps.Keys(paths)) {
		keyCtx = append(keyCtx, k+"="+paths[k])
	}
	return paths, lock, cache, keyCtx
}

// ActivePluginsRaw implements pmserver.RawActivePlugins: an active_plugins
// request whose params are byte for byte those of an answer ActivePlugins
// persisted, in the same context, is answered with that answer as it was
// sent, while every input it was read from is unchanged (the same stamps
// as ActivePlugins' own cache). A hit neither decodes the params nor
// decodes and encodes the offers; anything else declines, and the harness
// calls ActivePlugins.
func (p *PM) ActivePluginsRaw(ctx context.Context, params json.RawMessage) (json.RawMessage, bool, error) {
	_, _, cache, keyCtx := p.offersCache(ctx)
	if cache == nil || params == nil {
		return nil, false, nil
	}
	res, ok := cache.LoadRawOffers(depcache.RawOffersKey(offersCacheKey, keyCtx, params), p.session().Logger)
	return res, ok, nil
}
