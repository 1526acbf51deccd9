package cargopm

import (
	"reflect"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// hookDiagnostics runs the hook once, as a new PM process would (a fresh
// PM over the harness, sharing only cache): initialize, list_deps,
// active_plugins. It returns active_plugins' offers and diagnostics.
func hookDiagnostics(t *testing.T, ws, home, cache string) ([]protocol.Offer, []protocol.Diagnostic) {
	t.Helper()
	c, err := host.NewLocal(t.Context(), New(), host.Options{Workspace: ws, CacheDir: cache,
		Env: map[string]string{"CARGO_HOME": home, "HOME": home}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var deps []protocol.PackageID
	if err := c.Call(t.Context(), protocol.MethodListDeps, struct{}{}, &deps); err != nil {
		t.Fatal(err)
	}
	var offers []protocol.Offer
	diags, err := c.CallDiagnostics(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &offers)
	if err != nil {
		t.Fatal(err)
	}
	for i := range diags {
		diags[i].Request = nil // each process numbers its own requests
	}
	return offers, diags
}

// TestCachedHookRepeatsDiagnostics: a vendored crate whose SYMPOSIUM.toml
// does not parse gets the same diagnostics from the second hook, which may
// use the persisted answer, as from the first.
func TestCachedHookRepeatsDiagnostics(t *testing.T) {
	dir, cache := t.TempDir(), t.TempDir()
	ws, home := cacheWorkspace(t, dir)
	cargotest.WriteFiles(t, dir, map[string]string{
		"ws/vendor/b/SYMPOSIUM.toml": "name = [\n",
	})
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	offers1, diags1 := hookDiagnostics(t, ws, home, cache)
	if len(diags1) == 0 {
		t.Fatalf("the broken layers gave diagnostics %+v (offers %v)", diags1, offerSet(offers1))
	}
	offers2, diags2 := hookDiagnostics(t, ws, home, cache)
	if !reflect.DeepEqual(offerSet(offers1), offerSet(offers2)) {
		t.Errorf("second hook offers %v, first %v", offerSet(offers2), offerSet(offers1))
	}
	if !reflect.DeepEqual(diags1, diags2) {
		t.Errorf("second hook's diagnostics differ from the first's:\nfirst:  %+v\nsecond: %+v", diags1, diags2)
	}
}
