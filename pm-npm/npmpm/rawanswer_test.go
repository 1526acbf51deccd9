package npmpm

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

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
			writeFiles(t, ws, map[string]string{"node_modules/toml/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
		}},
		{"SYMPOSIUM.toml added", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/@s/scoped/SYMPOSIUM.toml": ""})
		}},
		{"SYMPOSIUM.toml removed", func(t *testing.T, ws string) {
			if err := os.Remove(filepath.Join(ws, "node_modules/toml/SYMPOSIUM.toml")); err != nil {
				t.Fatal(err)
			}
		}},
		{"package.json gains a symposium object in place", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/plain/package.json": `{"name":"plain","version":"1.0.0","symposium":{}}`})
		}},
		{"SKILL.md added deep in skills", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/plain/skills/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			deps := cacheWorkspace(t, ws)
			settle()
			var computed atomic.Int32
			env := map[string]string{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc")}
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), &computed} }, Deps: deps,
					Options: host.Options{Workspace: ws, CacheDir: cache, Env: env}}
			}
			pmtest.CheckServedEncoded(t, hook(t.TempDir()), hook(""), &computed, func() { tc.change(t, ws) })
		})
	}
}
