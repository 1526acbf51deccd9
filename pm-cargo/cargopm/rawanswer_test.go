package cargopm

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// countingPM counts the active_plugins requests the harness answers through
// ActivePlugins rather than from an encoded answer (ActivePluginsRaw).
type countingPM struct {
	*PM
	computed atomic.Int32
}

func (c *countingPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	c.computed.Add(1)
	return c.PM.ActivePlugins(ctx, deps)
}

// rawHook runs the hook once over the harness, as a new PM process would:
// list_deps, then active_plugins for deps. It returns the offers and
// how many active_plugins requests were computed rather than served
// encoded.
func rawHook(t *testing.T, ws, home, cache string, deps []protocol.PackageID) ([]protocol.Offer, int32) {
	t.Helper()
	pm := &countingPM{PM: New()}
	c, err := host.NewLocal(t.Context(), pm, host.Options{Workspace: ws, CacheDir: cache,
		Env: map[string]string{"CARGO_HOME": home, "HOME": home}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var listed []protocol.PackageID
	if err := c.Call(t.Context(), protocol.MethodListDeps, struct{}{}, &listed); err != nil {
		t.Fatal(err)
	}
	var offers []protocol.Offer
	if err := c.Call(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &offers); err != nil {
		t.Fatal(err)
	}
	return offers, pm.computed.Load()
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
			dir, cache := t.TempDir(), t.TempDir()
			ws, home := cacheWorkspace(t, dir)
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			first, computed := rawHook(t, ws, home, cache, deps)
			if computed != 1 {
				t.Fatalf("first hook computed %d answers, want 1", computed)
			}
			second, computed := rawHook(t, ws, home, cache, deps)
			if computed != 0 || !reflect.DeepEqual(pmtest.OfferSet(first), pmtest.OfferSet(second)) {
				t.Fatalf("second hook computed %d answers (want 0, served encoded) and offered %v, first %v", computed, pmtest.OfferSet(second), pmtest.OfferSet(first))
			}
			tc.change(t, dir)
			got, computed := rawHook(t, ws, home, cache, deps)
			want, _ := rawHook(t, ws, home, "", deps)
			if computed != 1 || !reflect.DeepEqual(pmtest.OfferSet(got), pmtest.OfferSet(want)) {
				t.Errorf("after the change the cached PM computed %d answers and offers\n%v\nwant 1 and\n%v", computed, pmtest.OfferSet(got), pmtest.OfferSet(want))
			}
			if reflect.DeepEqual(pmtest.OfferSet(want), pmtest.OfferSet(first)) {
				t.Errorf("the change did not change the answer: the case tests nothing")
			}
		})
	}
}
