package npmpm

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// listCountingPM counts, in computed, the list_deps requests the harness
// answers through ListDeps rather than from an encoded answer
// (ListDepsRaw).
type listCountingPM struct {
	*PM
	computed *atomic.Int32
}

func (c listCountingPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	c.computed.Add(1)
	return c.PM.ListDeps(ctx)
}

// TestListDepsServedEncoded: the second hook's list_deps is answered with
// the bytes the first sent (ListDeps is not called); after each change of
// what the answer is read from, the next hook computes it again and it is
// what a PM without a cache answers.
func TestListDepsServedEncoded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, ws string)
	}{
		{"package-lock.json changed", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"package-lock.json": `{"name":"app","lockfileVersion":3,"packages":{"":{"dependencies":{"a":"^1","b":"^1"}},"node_modules/a":{"version":"1.0.1"},"node_modules/b":{"version":"1.2.0"}}}`})
		}},
		{"dependency declared", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"package.json": `{"name":"app","version":"1.0.0","dependencies":{"a":"^1","b":"^1","c":"^3"}}`})
		}},
		{"package-lock.json removed", func(t *testing.T, ws string) {
			if err := os.Remove(filepath.Join(ws, "package-lock.json")); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			writeFiles(t, ws, map[string]string{
				"package.json":      `{"name":"app","version":"1.0.0","dependencies":{"a":"^1","b":"^1"}}`,
				"package-lock.json": `{"name":"app","lockfileVersion":3,"packages":{"":{"dependencies":{"a":"^1","b":"^1"}},"node_modules/a":{"version":"1.0.0"},"node_modules/b":{"version":"1.2.0"}}}`,
			})
			settle()
			var computed atomic.Int32
			env := map[string]string{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc")}
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return listCountingPM{New(), &computed} }, Deps: []protocol.PackageID{},
					Options: host.Options{Workspace: ws, CacheDir: cache, Env: env}}
			}
			cached, fresh := hook(t.TempDir()), hook("")
			run := func(h pmtest.Hook) ([]string, int32) {
				computed.Store(0)
				deps := h.Run(t).Deps
				return ids(deps), computed.Load()
			}
			first, n := run(cached)
			if n != 1 {
				t.Fatalf("first hook computed list_deps %d times, want 1", n)
			}
			second, n := run(cached)
			if n != 0 || !slices.Equal(first, second) {
				t.Fatalf("second hook computed list_deps %d times (want 0, served encoded) and answered %v, first %v", n, second, first)
			}
			tc.change(t, ws)
			got, n := run(cached)
			if n != 1 {
				t.Errorf("after the change list_deps was computed %d times, want 1", n)
			}
			want, _ := run(fresh)
			if !slices.Equal(got, want) || slices.Equal(want, first) {
				t.Errorf("after the change: cached %v, fresh %v, first %v", got, want, first)
			}
		})
	}
}
