package cargopm

import (
	"context"
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
const offersCacheKey = "cargo active_plugins 2"

// ActivePlugins offers the plugins embedded in those of deps whose sources
// are on disk: a crate embeds one when it has SYMPOSIUM.toml at its root, a
// [package.metadata.symposium] table in Cargo.toml, or skills/**/SKILL.md.
// It never touches the network.
//
// The answer is persisted (sdk/depcache) keyed on the requested
// dependencies, the workspace, CARGO_HOME and the path dependencies
// list_deps resolved from the manifests and Cargo.lock, and on the stamp
// of everything it was read from: each cargo configuration file (present
// or not), each vendored and registry source directory listed, each
// candidate crate's Cargo.toml, .cargo-ok and index cache, and each chosen
// crate's directory, SYMPOSIUM.toml, skills/ tree and .crate archive. A hit
// costs one stat per input. An answer whose computation logged a warning
// or sent the host a diagnostic is not persisted, so the next hook
// computes it again and sends the same diagnostics: a hit never hides one.
func (p *PM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	sess := p.session()
	paths := map[string]string{}
	if s, err := p.snapshot(ctx, true); err == nil {
		paths = s.Paths
	}
	var cache *depcache.Cache
	if sess.CacheDir != "" {
		cache = depcache.New(filepath.Join(sess.CacheDir, "cargo", "active_plugins")).Remembering(&p.verified)
	}
	keyCtx := []string{sess.Workspace, p.cargoHome()}
	for _, k := range slices.Sorted(maps.Keys(paths)) {
		keyCtx = append(keyCtx, k+"="+paths[k])
	}
	key := depcache.OffersKey(offersCacheKey, keyCtx, deps)
	if offers, ok := cache.LoadOffers(key, sess.Logger); ok {
		return offers, nil
	}
	var rec depcache.Recorder
	warned, sent := p.warnings.Count(), pmserver.DiagnosticsSent(ctx)
	offers, err := p.computeOffers(ctx, deps, paths, &rec)
	if err != nil || cache == nil {
		return offers, err
	}
	if rec.Tainted() || p.warnings.Count() != warned || pmserver.DiagnosticsSent(ctx) != sent {
		sess.Logger.Debug("cargo: active_plugins answer not persisted: its computation warned or sent a diagnostic, or an input could not be recorded")
		return offers, nil
	}
	if err := cache.StoreOffers(key, rec.Stamps(), offers); err != nil {
		sess.Logger.Debug("cargo: cannot persist the active_plugins answer", "err", err)
	}
	return offers, nil
}
