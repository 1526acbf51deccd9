package cargopm

import (
	"bytes"
	"context"
	"encoding/json"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
)

// ListDepsRaw implements pmserver.RawDepLister: while the persisted
// snapshot's inputs are unchanged and it carries neither warnings nor an
// error (whose diagnostics only ListDeps repeats), list_deps is answered
// with the snapshot's dependencies encoded straight from their persisted
// lines, byte for byte as the harness would encode ListDeps' answer,
// without building the ids first. Anything else declines, and the harness
// calls ListDeps.
func (p *PM) ListDepsRaw(ctx context.Context) (json.RawMessage, bool, error) {
	cache, key := p.snapshotCache()
	if cache == nil {
		return nil, false, nil
	}
	raw, ok := p.snapshotRead.Load(cache, key)
	if !ok {
		return nil, false, nil
	}
	head, _, lines, ok := splitSnapshot(raw)
	if !ok || !bytes.Equal(head, foundHead) {
		return nil, false, nil
	}
	res, ok := depcache.DepsJSON(lines, Name)
	return res, ok, nil
}
