package pypipm

import (
	"context"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// A connection may last a whole session, and list_deps is answered from
// the files as they are at each request: from the answer persisted as sent
// (ListDepsRaw), else the decoded one, else computed. active_plugins keys
// its answers on the source trees of path and editable dependencies, which
// list_deps learns; it takes them from the same answer. An answer that is
// computed but not persisted (it came with diagnostics, or the host gave
// no cache directory) is kept in memory as computedDeps, with the stamps
// of its inputs, so that active_plugins does not compute it again (and
// report its problems a second time) while those inputs are unchanged.

// computedDeps is a list_deps answer this process computed, with what
// tells whether it still stands.
type computedDeps struct {
	deps  []protocol.PackageID
	local map[string]string
	// err is the computation's failure; deps and local are then nil.
	err error
	// stamps are the inputs the answer was computed from.
	stamps []depcache.Stamp
	// start and end bound the computation: no stamp was taken before
	// start or after end.
	start, end time.Time
	// listed reports that a list_deps request answered with it; guarded
	// by PM.depsMu.
	listed bool
}

// recent reports whether c was computed within depcache.VerifiedWindow of
// now: as depcache trusts a stamp it found fresh that long, c stands for
// what a computation now would give (a change since is indistinguishable
// from one just after now). It is how the active_plugins request of the
// hook whose list_deps computed c reuses it without a stat.
func (c *computedDeps) recent(now time.Time) bool {
	return now.Sub(c.start) < depcache.VerifiedWindow
}

// unchanged reports whether every input of c still has its stamp, and
// none had changed within depcache.RacyWindow of the computation's end: a
// change in the same clock tick as a stamp leaves the stamp as it was, so
// such an answer is computed again rather than trusted (the rule depcache
// applies to what it persists). One stat per input.
func (c *computedDeps) unchanged() bool {
	limit := c.end.Add(-depcache.RacyWindow).UnixNano()
	for _, s := range c.stamps {
		if s.Size >= 0 && (s.Mod > limit || s.Change > limit) {
			return false
		}
	}
	for _, s := range c.stamps {
		if !s.Fresh() {
			return false
		}
	}
	return true
}

// computed returns a list_deps answer computed from the files as they are
// now, for the request ctx belongs to: list_deps (list true) or
// active_plugins. A computation in flight is waited for, not repeated.
// list_deps computes again, so that each hook reports the answer's
// problems, unless an active_plugins request pipelined beside it computed
// the answer moments ago (recent) and no list_deps has answered with it:
// its problems went out with that request. active_plugins reuses the last
// answer while it is recent or its inputs are unchanged.
func (p *PM) computed(ctx context.Context, list bool) *computedDeps {
	p.depsMu.Lock()
	defer p.depsMu.Unlock()
	if c := p.last; c != nil {
		switch {
		case list && !c.listed && c.recent(time.Now()):
			c.listed = true
			return c
		case !list && (c.recent(time.Now()) || c.unchanged()):
			return c
		}
	}
	c := p.computeDeps(ctx)
	if c.err != nil && ctx.Err() != nil {
		return c // cancelled: says nothing about the files
	}
	c.listed = list
	p.last = c
	return c
}

// lastComputed returns the last answer computed when it is recent, else
// nil; it waits for a computation in flight.
func (p *PM) lastComputed() *computedDeps {
	p.depsMu.Lock()
	defer p.depsMu.Unlock()
	if c := p.last; c != nil && c.recent(time.Now()) {
		return c
	}
	return nil
}
