package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// listingPM counts, in listed, the list_deps requests the harness answers
// through ListDeps rather than from the answer persisted as sent
// (ListDepsRaw).
type listingPM struct {
	*PM
	listed *atomic.Int32
}

func (l listingPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	l.listed.Add(1)
	return l.PM.ListDeps(ctx)
}

// TestListDepsRaw: the second hook's list_deps is served as persisted
// (ListDeps is not called) with the first hook's answer, and active_plugins
// still finds the path dependency's tree; after a change of the
// dependencies, of what is installed or of an environment variable the
// answer read, the next hook computes list_deps again and answers what a
// PM without a cache answers.
func TestListDepsRaw(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, ws string, env map[string]string)
	}{
		{"dependency added", func(t *testing.T, ws string, _ map[string]string) {
			writeTree(t, ws, map[string]string{"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\", \"extra==3.1\"]\n\n[tool.uv.sources]\nlocal = { path = \"local\" }\n"})
		}},
		{"distribution upgraded", func(t *testing.T, ws string, _ map[string]string) {
			site := filepath.Join(ws, cacheSite)
			os.RemoveAll(filepath.Join(site, "tomlplug-1.0.dist-info"))
			writeTree(t, site, map[string]string{
				"tomlplug-2.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tomlplug\nVersion: 2.0\n\n",
				"tomlplug-2.0.dist-info/RECORD":   "tomlplug/__init__.py,,\n",
			})
		}},
		{"VIRTUAL_ENV set", func(t *testing.T, ws string, env map[string]string) {
			other := filepath.Join(ws, "other-env")
			writeTree(t, other, map[string]string{
				"pyvenv.cfg": "version = 3.12.1\n",
				"lib/python3.12/site-packages/epplug-4.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: epplug\nVersion: 4.0\n\n",
			})
			os.RemoveAll(filepath.Join(ws, ".venv"))
			env["VIRTUAL_ENV"] = other
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own workspace and cache
			ws := t.TempDir()
			cacheProject(t, ws)
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var listed atomic.Int32
			env := testEnv(t, nil)
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return listingPM{New(), &listed} },
					Options: host.Options{Workspace: ws, CacheDir: cache, Env: env}}
			}
			cached := hook(t.TempDir())
			run := func(h pmtest.Hook) (pmtest.HookRun, int32) {
				listed.Store(0)
				r := h.Run(t)
				return r, listed.Load()
			}
			first, n := run(cached)
			if n != 1 || len(first.Offers) != 3 {
				t.Fatalf("first hook: list_deps computed %d times (want 1), %d offers (want 3)", n, len(first.Offers))
			}
			second, n := run(cached)
			if n != 0 || !slices.Equal(second.Deps, first.Deps) {
				t.Fatalf("second hook: list_deps computed %d times (want 0, served as persisted), answered %v, first %v", n, second.Deps, first.Deps)
			}
			// The path dependency's tree comes from the answer as persisted.
			pmtest.CheckInvalidation(t, false, nil, second.Offers, first.Offers)
			tc.change(t, ws, env)
			got, n := run(cached)
			if n != 1 {
				t.Errorf("after the change list_deps was computed %d times, want 1", n)
			}
			want, _ := run(hook(""))
			if !slices.Equal(got.Deps, want.Deps) {
				t.Errorf("after the change the cached PM lists %v, want %v", got.Deps, want.Deps)
			}
			if slices.Equal(want.Deps, first.Deps) {
				t.Errorf("the change did not change the answer: the case tests nothing")
			}
		})
	}
}
