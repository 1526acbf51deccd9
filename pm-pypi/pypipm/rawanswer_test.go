package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

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
func rawHook(t *testing.T, ws, cache string, deps []protocol.PackageID) ([]protocol.Offer, int32) {
	t.Helper()
	pm := &countingPM{PM: New()}
	c, err := host.NewLocal(t.Context(), pm, host.Options{Workspace: ws, CacheDir: cache, Env: testEnv(t, nil)})
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
			ws, cache := t.TempDir(), t.TempDir()
			deps := cacheProject(t, ws)
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			first, computed := rawHook(t, ws, cache, deps)
			if computed != 1 {
				t.Fatalf("first hook computed %d answers, want 1", computed)
			}
			second, computed := rawHook(t, ws, cache, deps)
			if computed != 0 || !reflect.DeepEqual(pmtest.OfferSet(first), pmtest.OfferSet(second)) {
				t.Fatalf("second hook computed %d answers (want 0, served encoded) and offered %v, first %v", computed, pmtest.OfferSet(second), pmtest.OfferSet(first))
			}
			tc.change(t, ws)
			got, computed := rawHook(t, ws, cache, deps)
			want, _ := rawHook(t, ws, "", deps)
			if computed != 1 || !reflect.DeepEqual(pmtest.OfferSet(got), pmtest.OfferSet(want)) {
				t.Errorf("after the change the cached PM computed %d answers and offers\n%v\nwant 1 and\n%v", computed, pmtest.OfferSet(got), pmtest.OfferSet(want))
			}
			if reflect.DeepEqual(pmtest.OfferSet(want), pmtest.OfferSet(first)) {
				t.Errorf("the change did not change the answer: the case tests nothing")
			}
		})
	}
}
