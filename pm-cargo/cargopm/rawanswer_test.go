package cargopm

import (
	"context"
	"os"
	"path/filepath"
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
	deps := ids("a@1.0.0", "b@1.0.0", "c@1.0.0", "local@0.5.0")
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, dir string)
	}{
		{"SYMPOSIUM.toml edited in place", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/b/SYMPOSIUM.toml": "name = \"b-renamed\"\n"})
		}},
		{"SYMPOSIUM.toml added", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/a/SYMPOSIUM.toml": "name = \"a-plugin\"\n"})
		}},
		{"SYMPOSIUM.toml removed", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "ws/vendor/b/SYMPOSIUM.toml")); err != nil {
				t.Fatal(err)
			}
		}},
		{"Cargo.toml gains a metadata table in place", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/a/Cargo.toml": "[package]\nname = \"a\"\nversion = \"1.0.0\"\n\n[package.metadata.symposium]\nname = \"a-plugin\"\n"})
		}},
		{"path dependency's metadata edited in place", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"local/Cargo.toml": "[package]\nname = \"local\"\nversion = \"0.5.0\"\n\n[package.metadata.symposium]\nname = \"renamed\"\n"})
		}},
		{"SKILL.md added deep in skills", func(t *testing.T, dir string) {
			cargotest.WriteFiles(t, dir, map[string]string{"ws/vendor/a/skills/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws, home := cacheWorkspace(t, dir)
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var computed atomic.Int32
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), &computed} }, Deps: deps,
					Options: host.Options{Workspace: ws, CacheDir: cache, Env: map[string]string{"CARGO_HOME": home, "HOME": home}}}
			}
			pmtest.CheckServedEncoded(t, hook(t.TempDir()), hook(""), &computed, func() { tc.change(t, dir) })
		})
	}
}
