package pmserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// RawActivePlugins is implemented by PMs that keep active_plugins answers
// already encoded, typically persisted in a cache, and can find one from the
// request's params without decoding them. It is optional, like io.WriterTo:
// the harness offers every active_plugins request to ActivePluginsRaw first
// and runs the usual path (decode the params, PM.ActivePlugins, check and
// encode the offers) only when it declines.
type RawActivePlugins interface {
	// ActivePluginsRaw receives the request's params exactly as they arrived
	// (nil when the request had none). It returns either the complete result
	// to send and true, or false to decline; a non-nil error is answered as
	// PM.ActivePlugins' errors are.
	//
	// The result must be exactly what the usual path would answer to these
	// params now: a PM obtains such bytes from EncodeOffers while answering
	// through ActivePlugins, and may serve them again only while everything
	// they were computed from is unchanged. Diagnostics sent by
	// ActivePluginsRaw reach the host before the result, as with any handler;
	// a PM must not serve an answer whose computation sent diagnostics,
	// since serving it sends none.
	//
	// The harness does not decode the result to repeat the checks it makes
	// on offers (that decoding is the cost this path exists to avoid), nor
	// re-encode it: it refuses, as an internal error, a result that is not
	// valid UTF-8 and JSON on one line holding an array (one scan, which keeps the
	// protocol stream intact whatever the bytes), and writes it as it is.
	// The offers were checked when EncodeOffers produced the bytes, and the
	// host validates every answer anyway.
	ActivePluginsRaw(ctx context.Context, params json.RawMessage) (json.RawMessage, bool, error)
}

// RawDepLister is implemented by DepLister PMs that keep list_deps answers
// already encoded. Like RawActivePlugins, it is tried first and may
// decline, and the harness then calls DepLister.ListDeps as usual.
type RawDepLister interface {
	// ListDepsRaw returns either the complete list_deps result to send and
	// true, or false to decline. The result must be exactly what ListDeps'
	// answer would be sent as now: bytes from EncodeDeps, served only while
	// what they were computed from is unchanged, and never an answer whose
	// computation sent diagnostics. The harness checks only that the result
	// is a JSON array (see RawActivePlugins).
	ListDepsRaw(ctx context.Context) (json.RawMessage, bool, error)
}

// requestKey is the context key of the request a handler is answering.
type requestKey struct{}

// request is what the harness tells a handler's helpers about the request
// being answered.
type request struct {
	s      *server
	id     json.RawMessage // the request's id as received
	params json.RawMessage
}

func withRequest(ctx context.Context, s *server, id, params json.RawMessage) context.Context {
	return context.WithValue(ctx, requestKey{}, &request{s: s, id: id, params: params})
}

// Params returns the params of the request ctx belongs to, exactly as they
// arrived, or nil when the request had none or ctx is not a request's.
// A PM answering active_plugins through ActivePlugins uses it to key the
// encoded answer it keeps for ActivePluginsRaw. The bytes must not be
// modified.
func Params(ctx context.Context) json.RawMessage {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		return r.params
	}
	return nil
}

// EncodeOffers returns offers encoded exactly as the harness sends them as
// the result of the active_plugins or load_plugin request ctx belongs to,
// after the checks it makes on them: every id must be minted under the
// name the PM announced, with a name and a version. An absent manifest is
// sent as {} and nil offers as []. It fails when ctx is not a request's.
// offers is not modified.
func EncodeOffers(ctx context.Context, offers []protocol.Offer) (json.RawMessage, error) {
	r, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return nil, fmt.Errorf("encoding offers: not called while answering a request")
	}
	checked, err := r.s.checkOffers("encoding offers", append([]protocol.Offer(nil), offers...))
	if err != nil {
		return nil, err
	}
	return json.Marshal(checked)
}

// EncodeDeps returns deps encoded exactly as the harness sends them as the
// result of a list_deps request, after the checks it makes on them (see
// EncodeOffers). It fails when ctx is not a request's.
func EncodeDeps(ctx context.Context, deps []protocol.PackageID) (json.RawMessage, error) {
	r, ok := ctx.Value(requestKey{}).(*request)
	if !ok {
		return nil, fmt.Errorf("encoding deps: not called while answering a request")
	}
	if err := r.s.checkMinted(protocol.MethodListDeps, deps...); err != nil {
		return nil, err
	}
	if deps == nil {
		deps = []protocol.PackageID{}
	}
	return json.Marshal(deps)
}

// rawPlaceholder is the result a handler returns for a pre-encoded answer:
// jrpc2 encodes it in place of the answer (encoding the answer would scan it
// all again), and the channel's Send writes the answer in its place.
const rawPlaceholder = "0"

// rawResult vets a result a PM encoded itself and hands it to the channel
// for the response to the request ctx belongs to. It must be one line
// holding a JSON array; unless the PM vetted it when it stored it (see
// Vetted), it must also be valid UTF-8 and JSON.
func (s *server) rawResult(ctx context.Context, method string, res json.RawMessage, vetted bool) (any, error) {
	r, _ := ctx.Value(requestKey{}).(*request)
	switch {
	case len(res) < 2 || res[0] != '[' || res[len(res)-1] != ']':
		return nil, fmt.Errorf("%s: the PM's pre-encoded answer is not a JSON array", method)
	case bytes.IndexByte(res, '\n') >= 0:
		return nil, fmt.Errorf("%s: the PM's pre-encoded answer is not on one line", method)
	case !vetted && !utf8.Valid(res):
		return nil, fmt.Errorf("%s: the PM's pre-encoded answer is not valid UTF-8", method)
	case !vetted && !jsonscan.Valid(res):
		return nil, fmt.Errorf("%s: the PM's pre-encoded answer is not valid JSON", method)
	case r == nil:
		return nil, fmt.Errorf("%s: internal error: no request to answer", method)
	}
	s.ch.holdRaw(r.id, res)
	return json.RawMessage(rawPlaceholder), nil
}

// holdRaw keeps res as the result of the response to the request with the
// given id, for Send to write in place of the placeholder.
func (c *lineChannel) holdRaw(id json.RawMessage, res json.RawMessage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.raw == nil {
		c.raw = make(map[string]json.RawMessage)
	}
	c.raw[framing.IDKey(id)] = res
}

// spliceRaw returns msg, the response to the request with the given id and
// key, as the parts to write in order: the response's head, the pre-encoded
// result held for it in place of the placeholder, and its end. The result
// is not copied into a joined message (it can be megabytes). A response to
// such a request that is not the placeholder result (jrpc2 answered it
// otherwise, say once it was cancelled) is sent as it is, as the one part;
// the caller holds mu.
func (c *lineChannel) spliceRaw(msg []byte, id json.RawMessage, key string) [][]byte {
	res, ok := c.raw[key]
	if !ok {
		return [][]byte{msg}
	}
	delete(c.raw, key)
	h, ok := placeholderHead(msg, id)
	if !ok {
		return [][]byte{msg}
	}
	return [][]byte{h, res, []byte("}")}
}

// placeholderHead reports whether msg is the response to the request with
// the given id whose result is the placeholder, and returns its head: msg
// up to the result, which the pre-encoded result and "}" follow.
func placeholderHead(msg []byte, id json.RawMessage) ([]byte, bool) {
	const head, mid, tail = `{"jsonrpc":"2.0","id":`, `,"result":`, rawPlaceholder + `}`
	if len(msg) != len(head)+len(id)+len(mid)+len(tail) || !bytes.HasPrefix(msg, []byte(head)) ||
		!bytes.HasSuffix(msg, []byte(mid+tail)) || !bytes.Equal(msg[len(head):len(head)+len(id)], id) {
		return nil, false
	}
	return msg[:len(msg)-len(tail)], true
}
