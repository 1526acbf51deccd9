package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// countingPM counts, in computed, the active_plugins requests the harness
// answers through ActivePlugins rather than from an encoded answer
// (ActivePluginsRaw).
type countingPM struct {
	*PM
	computed *atomic.Int32
}

func (c countingPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	c.computed.Add(1)
	return c.PM.ActivePlugins(ctx, deps)
}

// TestRawAnswerInvalidation: the second hook is answered from the encoded
// answer the first persisted (ActivePlugins is not called); after each
// in-place edit of what a plugin is read from, the next hook computes the
// answer again and it is exactly what a PM without a cache answers.
func TestRawAnswerInvalidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, ws string)
	}{
		{"SYMPOSIUM.toml edited in place", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{cacheSite + "tomlplug/SYMPOSIUM.toml": "name = \"renamed\"\n"})
		}},
		{"SYMPOSIUM.toml added", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{cacheSite + "plain/SYMPOSIUM.toml": "name = \"plain-plugin\"\n"})
		}},
		{"SYMPOSIUM.toml removed", func(t *testing.T, ws string) {
			if err := os.Remove(filepath.Join(ws, cacheSite+"tomlplug/SYMPOSIUM.toml")); err != nil {
				t.Fatal(err)
			}
		}},
		{"entry point added in place", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{cacheSite + "epplug-1.0.dist-info/entry_points.txt": "[console_scripts]\nx = epplug\n"})
		}},
		{"path dependency's tool.symposium edited in place", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{"local/pyproject.toml": "[project]\nname = \"local\"\nversion = \"0.5\"\n\n[tool.symposium]\nname = \"renamed\"\n"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			deps := cacheProject(t, ws)
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var computed atomic.Int32
			env := testEnv(t, nil)
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), &computed} }, Deps: deps,
					Options: host.Options{Workspace: ws, CacheDir: cache, Env: env}}
			}
			pmtest.CheckServedEncoded(t, hook(t.TempDir()), hook(""), &computed, func() { tc.change(t, ws) })
		})
	}
}
