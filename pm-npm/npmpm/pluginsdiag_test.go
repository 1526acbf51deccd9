package npmpm

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// hookDiagnostics runs the hook once, as a new PM process would (a fresh
// PM over the harness, sharing only cache): initialize, list_deps,
// active_plugins. It returns active_plugins' offers and diagnostics.
func hookDiagnostics(t *testing.T, ws, cache string) ([]protocol.Offer, []protocol.Diagnostic) {
	t.Helper()
	c, err := host.NewLocal(t.Context(), New(), host.Options{Workspace: ws, CacheDir: cache, Env: map[string]string{
		"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc"),
	}})
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

// TestCachedHookRepeatsDiagnostics: a workspace whose dependency declares a
// half-broken "symposium" object gets the same diagnostics from the second
// hook, which may use the persisted answer, as from the first.
func TestCachedHookRepeatsDiagnostics(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":                     `{"name":"app","version":"1.0.0","dependencies":{"broken":"1.0.0","good":"1.0.0"}}`,
		"package-lock.json":                `{"name":"app","lockfileVersion":3,"packages":{"":{"name":"app","dependencies":{"broken":"1.0.0","good":"1.0.0"}},"node_modules/broken":{"version":"1.0.0"},"node_modules/good":{"version":"1.0.0"}}}`,
		"node_modules/broken/package.json": `{"name":"broken","version":"1.0.0","symposium":{"skills":"skills","hooks":5}}`,
		"node_modules/good/package.json":   `{"name":"good","version":"1.0.0","symposium":{}}`,
	})
	settle()
	offers1, diags1 := hookDiagnostics(t, ws, cache)
	if len(diags1) == 0 {
		t.Fatalf("the broken \"symposium\" object gave no diagnostic (offers %v)", offerSet(offers1))
	}
	offers2, diags2 := hookDiagnostics(t, ws, cache)
	if !reflect.DeepEqual(offerSet(offers1), offerSet(offers2)) {
		t.Errorf("second hook offers %v, first %v", offerSet(offers2), offerSet(offers1))
	}
	if !reflect.DeepEqual(diags1, diags2) {
		t.Errorf("second hook's diagnostics differ from the first's:\nfirst:  %+v\nsecond: %+v", diags1, diags2)
	}
}
