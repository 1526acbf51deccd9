package depcache

import (
	"context"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// StoreAnswer persists offers, the active_plugins answer computed for deps
// from the inputs stamps, in the way the PM will look it up again: when
// ctx belongs to a request the harness is answering, encoded exactly as the
// harness sends it, under RawOffersKey(prefix, context, the request's
// params), for the PM's pmserver.RawActivePlugins to serve; otherwise (a
// direct call, as in tests) decoded, under OffersKey(prefix, context, deps).
func (c *Cache) StoreAnswer(ctx context.Context, prefix string, context []string, deps []protocol.PackageID, stamps []Stamp, offers []protocol.Offer) error {
	params := pmserver.Params(ctx)
	if params == nil {
		return c.StoreOffers(OffersKey(prefix, context, deps), stamps, offers)
	}
	enc, err := pmserver.EncodeOffers(ctx, offers)
	if err != nil {
		return err
	}
	return c.StoreRawOffers(RawOffersKey(prefix, context, params), stamps, enc)
}

// StoreEncodedDeps persists deps, the list_deps answer computed from the
// inputs stamps, under key, after head (one or more lines the PM reads
// back first; may be empty): encoded exactly as the harness sends it as
// the answer of the request ctx belongs to, for the PM's
// pmserver.RawDepLister to serve. Outside a request (a direct call, as in
// tests) the answer cannot be encoded, and it stores nothing and returns
// the reason. A nil c stores nothing.
func (c *Cache) StoreEncodedDeps(ctx context.Context, key string, stamps []Stamp, head []byte, deps []protocol.PackageID) error {
	if c == nil {
		return nil
	}
	enc, err := pmserver.EncodeDeps(ctx, deps)
	if err != nil {
		return err
	}
	return c.Store(key, stamps, append(head[:len(head):len(head)], enc...))
}
