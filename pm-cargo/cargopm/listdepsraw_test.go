package cargopm

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// listCountingPM counts, in computed, the list_deps requests the harness
// answers through ListDeps rather than from the persisted snapshot
// (ListDepsRaw).
type listCountingPM struct {
	*PM
	computed *atomic.Int32
}

func (c listCountingPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	c.computed.Add(1)
	return c.PM.ListDeps(ctx)
}

// TestListDepsRaw: the second hook's list_deps is answered from the
// persisted snapshot without ListDeps, with the same dependencies; after
// Cargo.lock changes, ListDeps answers again, exactly as a PM without a
// cache; a snapshot with warnings is never served raw, so that ListDeps
// repeats them.
func TestListDepsRaw(t *testing.T) {
	for _, tc := range []struct {
		name       string
		noLock     bool // a snapshot with a warning
		change     func(t *testing.T, ws string)
		wantServed bool
	}{
		{"Cargo.lock edited", false, func(t *testing.T, ws string) {
			// c updated to 1.0.1 (a path dependency's version is its
			// manifest's, whatever the lockfile says).
			cargotest.WriteFiles(t, ws, map[string]string{"Cargo.lock": strings.Replace(cacheLock, "name = \"c\"\nversion = \"1.0.0\"", "name = \"c\"\nversion = \"1.0.1\"", 1)})
		}, true},
		{"Cargo.toml edited", false, func(t *testing.T, ws string) {
			cargotest.WriteFiles(t, ws, map[string]string{"Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\na = \"1\"\n"})
		}, true},
		{"a snapshot with a warning is not served", true, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, home := cacheWorkspace(t, t.TempDir())
			if tc.noLock {
				if err := os.Remove(filepath.Join(ws, "Cargo.lock")); err != nil {
					t.Fatal(err)
				}
			}
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var computed atomic.Int32
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return listCountingPM{New(), &computed} },
					Options: host.Options{Workspace: ws, CacheDir: cache, Env: map[string]string{"CARGO_HOME": home, "HOME": home}}}
			}
			cached := hook(t.TempDir())
			run := func(h pmtest.Hook) ([]protocol.PackageID, int32) {
				computed.Store(0)
				deps := h.Run(t).Deps
				return deps, computed.Load()
			}
			first, n := run(cached)
			if n != 1 || len(first) == 0 {
				t.Fatalf("first hook: ListDeps called %d times, answered %v", n, first)
			}
			second, n := run(cached)
			if !slices.Equal(second, first) {
				t.Fatalf("second hook answered %v, first %v", second, first)
			}
			if tc.wantServed != (n == 0) {
				t.Fatalf("second hook: ListDeps called %d times, want served from the snapshot: %v", n, tc.wantServed)
			}
			if tc.change == nil {
				return
			}
			tc.change(t, ws)
			got, n := run(cached)
			if n != 1 {
				t.Errorf("after the change ListDeps was called %d times, want 1", n)
			}
			want, _ := run(hook(""))
			if !slices.Equal(got, want) || slices.Equal(want, first) {
				t.Errorf("after the change the cached PM answers %v, a PM without a cache %v, first %v", got, want, first)
			}
		})
	}
}
