package npmpm

import (
	"context"
	"encoding/json"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// listRawCacheKey names the persisted list_deps answer kept encoded as it
// was sent, beside ListDeps' own (listCacheKey), with the same stamps; the
// workspace directory follows it.
const listRawCacheKey = "npm list_deps raw 2\x00"

// ListDepsRaw implements pmserver.RawDepLister: while every input of the
// persisted list_deps answer is unchanged, the answer is sent as it was
// encoded when it was computed, neither parsed nor encoded again (at
// thousands of dependencies, the larger part of a cached list_deps). It
// declines when there is no such answer, and the harness calls ListDeps.
func (p *PM) ListDepsRaw(ctx context.Context) (json.RawMessage, bool, error) {
	cache := p.listCache()
	if cache == nil {
		return nil, false, nil
	}
	p.listCheck.Lock()
	raw, ok := cache.Load(listRawCacheKey + p.workspace)
	p.listCheck.Unlock()
	return raw, ok, nil
}

// storeListRaw persists deps, computed from the inputs stamps, encoded as
// the harness sends them as the answer of the list_deps request ctx
// belongs to, for ListDepsRaw. Called directly (ctx is no request's,
// and EncodeDeps fails), it stores nothing.
func (p *PM) storeListRaw(ctx context.Context, cache *depcache.Cache, stamps []depcache.Stamp, deps []protocol.PackageID) {
	if err := cache.StoreEncodedDeps(ctx, listRawCacheKey+p.workspace, stamps, nil, deps); err != nil {
		p.log.Debug("cannot persist the encoded list_deps answer", "err", err)
	}
}
