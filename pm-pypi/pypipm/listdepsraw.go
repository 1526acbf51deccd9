package pypipm

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// The list_deps answer is also persisted as the harness sends it, under
// <cache_dir>/pypi/deps-raw/, with the same key and stamps as the decoded
// answer (listDeps): a hook served from it neither decodes the dependencies
// nor encodes them again (pmserver.RawDepLister), which at 2,000
// dependencies is most of what a cached list_deps costs.

// rawDeps is a persisted list_deps answer as sent, found fresh.
type rawDeps struct {
	// local maps path and editable dependencies to their source trees, as
	// ListDeps would.
	local map[string]string
	// encoded is the list_deps result as sent.
	encoded json.RawMessage
	// ok reports a fresh answer, read under the same values of the
	// environment variables it depends on.
	ok bool
}

// rawDepsCache is where list_deps answers are persisted as sent: nil,
// which stores nothing, when the host gave no cache directory.
func (p *PM) rawDepsCache() *depcache.Cache {
	if !p.cacheSet {
		return nil
	}
	return depcache.New(filepath.Join(p.cache, "deps-raw")).Remembering(&p.verified)
}

// loadRawDeps reads the list_deps answer persisted as sent, found fresh.
// The pipelined list_deps and active_plugins of a hook (for the source
// trees it keys on) share one read of it (depcache.SharedRead); a later
// hook reads it again.
func (p *PM) loadRawDeps() rawDeps {
	cache := p.rawDepsCache()
	if cache == nil {
		return rawDeps{}
	}
	data, ok := p.depsRead.Load(cache, depsCacheKey+p.ws)
	if !ok {
		return rawDeps{}
	}
	line, enc, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return rawDeps{}
	}
	var head depsHead
	if string(line) != "{}" {
		if err := json.Unmarshal(line, &head); err != nil || !p.sameEnv(head.Env) {
			return rawDeps{}
		}
	}
	return rawDeps{local: head.Local, encoded: enc, ok: true}
}

// ListDepsRaw implements pmserver.RawDepLister: the list_deps answer
// persisted as sent, while every input it was computed from is unchanged
// and the environment variables it read keep their values (the same
// checks as ListDeps' own cache); otherwise it declines, and the harness
// calls ListDeps.
func (p *PM) ListDepsRaw(ctx context.Context) (json.RawMessage, bool, error) {
	r := p.loadRawDeps()
	return r.encoded, r.ok, nil
}

// storeRawDeps persists deps as the harness sends them, with head and the
// stamps of the inputs they were computed from, when ctx is a request's
// (pmserver.EncodeDeps needs one).
func (p *PM) storeRawDeps(ctx context.Context, head depsHead, stamps []depcache.Stamp, deps []protocol.PackageID) {
	line, err := json.Marshal(head)
	if err != nil {
		return
	}
	if err := p.rawDepsCache().StoreEncodedDeps(ctx, depsCacheKey+p.ws, stamps, append(line, '\n'), deps); err != nil {
		p.log.Debug("cannot persist the encoded list_deps answer", "err", err)
	}
	p.depsRead.Forget()
}
