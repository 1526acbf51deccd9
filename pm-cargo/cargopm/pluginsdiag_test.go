package cargopm

import (
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

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
	h := pmtest.Hook{New: func() pmserver.PM { return New() }, Options: host.Options{Workspace: ws, CacheDir: cache,
		Env: map[string]string{"CARGO_HOME": home, "HOME": home}}}
	if first := h.Repeat(t); len(first.Diagnostics) == 0 {
		t.Fatalf("the broken layers gave no diagnostic (offers %v)", pmtest.OfferSet(first.Offers))
	}
}
