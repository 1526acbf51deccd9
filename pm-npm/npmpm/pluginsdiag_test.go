package npmpm

import (
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

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
	h := pmtest.Hook{New: func() pmserver.PM { return New() }, Options: host.Options{Workspace: ws, CacheDir: cache, Env: map[string]string{
		"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc"),
	}}}
	if first := h.Repeat(t); len(first.Diagnostics) == 0 {
		t.Fatalf("the broken \"symposium\" object gave no diagnostic (offers %v)", pmtest.OfferSet(first.Offers))
	}
}
