package pmtest

import (
	"maps"
	"reflect"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Hook runs the hook path (initialize, list_deps, active_plugins) against
// a PM served in-process, as Symposium runs it on every prompt: each run
// is a new PM, sharing with the runs before it only what Options names (the
// workspace and the cache directory). It is for a PM's own tests of what
// its persisted answers must keep, such as the diagnostics of a degraded
// workspace.
type Hook struct {
	// New returns a fresh PM for each run.
	New func() pmserver.PM
	// Options are the initialize parameters (workspace, cache directory,
	// env).
	Options host.Options
	// Started, when set, is called with each run's PM once it is
	// initialized, before list_deps.
	Started func(pm pmserver.PM)
	// Deps, when set, are the dependencies active_plugins is asked about,
	// instead of list_deps' answer.
	Deps []protocol.PackageID
}

// HookRun is what one run of the hook path answered.
type HookRun struct {
	// Deps is list_deps' answer.
	Deps []protocol.PackageID
	// Offers is active_plugins' answer.
	Offers []protocol.Offer
	// Diagnostics are the diagnostics sent during active_plugins, without
	// their request ids (each process numbers its own requests).
	Diagnostics []protocol.Diagnostic
}

// Run runs the hook path once; a failed call fails t.
func (h Hook) Run(t testing.TB) HookRun {
	t.Helper()
	pm := h.New()
	c, err := host.NewLocal(t.Context(), pm, h.Options)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if h.Started != nil {
		h.Started(pm)
	}
	var r HookRun
	if err := c.Call(t.Context(), protocol.MethodListDeps, struct{}{}, &r.Deps); err != nil {
		t.Fatal(err)
	}
	deps := r.Deps
	if h.Deps != nil {
		deps = h.Deps
	}
	r.Diagnostics, err = c.CallDiagnostics(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &r.Offers)
	if err != nil {
		t.Fatal(err)
	}
	for i := range r.Diagnostics {
		r.Diagnostics[i].Request = nil
	}
	return r
}

// Repeat runs the hook path twice and fails t unless the second run, which
// may be answered from what the first persisted, offers the same plugins
// and sends the same diagnostics: a cached answer never hides a problem.
// It returns the first run, for the caller to check that the case has the
// diagnostics it is about.
func (h Hook) Repeat(t testing.TB) HookRun {
	t.Helper()
	first := h.Run(t)
	second := h.Run(t)
	if a, b := OfferSet(first.Offers), OfferSet(second.Offers); !maps.Equal(a, b) {
		t.Errorf("second hook offers %v, first %v", b, a)
	}
	if !reflect.DeepEqual(first.Diagnostics, second.Diagnostics) {
		t.Errorf("second hook's diagnostics differ from the first's:\nfirst:  %+v\nsecond: %+v", first.Diagnostics, second.Diagnostics)
	}
	return first
}

// OfferSet maps each offer's package id to its root and manifest, a form
// in which two answers compare regardless of order.
func OfferSet(offers []protocol.Offer) map[string]string {
	out := make(map[string]string, len(offers))
	for _, o := range offers {
		out[o.ID.String()] = o.Root + " " + string(o.Manifest)
	}
	return out
}

// CheckInvalidation checks one case of a persisted answer's invalidation:
// after a change to the files, cached (the answer of a PM that persisted
// first before the change) must equal fresh (a PM without a cache), and,
// unless the case changes nothing, the change must have changed the
// answer, or the case tests nothing.
func CheckInvalidation(t testing.TB, changed bool, first, cached, fresh []protocol.Offer) {
	t.Helper()
	got, want := OfferSet(cached), OfferSet(fresh)
	if !maps.Equal(got, want) {
		t.Errorf("after the change the cached PM answers\n%v\nwant\n%v", sorted(got), sorted(want))
	}
	if changed && maps.Equal(want, OfferSet(first)) {
		t.Errorf("the change did not change the answer: the case tests nothing")
	}
}

// CheckServedEncoded checks one invalidation case of an active_plugins
// answer a PM serves pre-encoded (pmserver.RawActivePlugins). cached runs
// with a cache directory, fresh with none; computed counts the
// active_plugins requests the runs' PMs computed through ActivePlugins
// rather than served encoded (the caller's New wraps the PM to count
// them). The first run must compute, the second must be served encoded
// with the same offers; after change, the next run must compute again and
// answer exactly what fresh answers, and that answer must differ from the
// first, or the case tests nothing.
func CheckServedEncoded(t testing.TB, cached, fresh Hook, computed *atomic.Int32, change func()) {
	t.Helper()
	run := func(h Hook) ([]protocol.Offer, int32) {
		computed.Store(0)
		offers := h.Run(t).Offers
		return offers, computed.Load()
	}
	first, n := run(cached)
	if n != 1 {
		t.Fatalf("first hook computed %d answers, want 1", n)
	}
	second, n := run(cached)
	if a, b := OfferSet(first), OfferSet(second); n != 0 || !maps.Equal(a, b) {
		t.Fatalf("second hook computed %d answers (want 0, served encoded) and offered %v, first %v", n, sorted(b), sorted(a))
	}
	change()
	got, n := run(cached)
	if n != 1 {
		t.Errorf("after the change the cached PM computed %d answers, want 1", n)
	}
	want, _ := run(fresh)
	CheckInvalidation(t, true, first, got, want)
}

// sorted lists a set's entries in key order, for messages.
func sorted(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, k+": "+m[k])
	}
	return out
}
