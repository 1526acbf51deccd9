package npmpm

import (
	"context"
	"maps"
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

// recordInstall stands for an installer run on ws: it rewrites npm's
// hidden lockfile, the record npm keeps of what node_modules holds, in
// place as npm does (so that node_modules' own listing does not change).
func recordInstall(t *testing.T, ws string) {
	t.Helper()
	rec := filepath.Join(ws, "node_modules", ".package-lock.json")
	if err := os.WriteFile(rec, []byte(`{"name":"root","lockfileVersion":3,"requires":true,"packages":{"x":{}}}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// installedWorkspace is cacheWorkspace as npm leaves it: with its hidden
// lockfile, and a workspace member linked into node_modules (the link is
// the user's: what it leads to is edited in place).
func installedWorkspace(t *testing.T, ws string) []protocol.PackageID {
	t.Helper()
	deps := cacheWorkspace(t, ws)
	writeFiles(t, ws, map[string]string{
		"node_modules/.package-lock.json": `{"name":"root","lockfileVersion":3,"requires":true,"packages":{}}` + "\n",
		"packages/b/SYMPOSIUM.toml":       "",
	})
	if err := os.Symlink(filepath.Join("..", "packages", "b"), filepath.Join(ws, "node_modules", "b")); err != nil {
		t.Skip("no symbolic links:", err)
	}
	return append(deps, npmID("b", "1.0.0"))
}

// rawHooks returns the hook of a PM with a cache directory and of one
// without, counting in computed the answers computed rather than served
// encoded.
func rawHooks(t *testing.T, ws string, deps []protocol.PackageID, computed *atomic.Int32) (cached, fresh pmtest.Hook) {
	env := map[string]string{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc")}
	hook := func(cache string) pmtest.Hook {
		return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), computed} }, Deps: deps,
			Options: host.Options{Workspace: ws, CacheDir: cache, Env: env}}
	}
	return hook(t.TempDir()), hook("")
}

// TestRawAnswerInvalidation: the second hook is answered from the encoded
// answer the first persisted (ActivePlugins is not called); after each
// change of what a plugin is read from, the next hook computes the answer
// again and it is exactly what a PM without a cache answers. Installed
// content changes as installers change it (npm's hidden lockfile rewritten
// with it); what users edit (a linked member, the workspace's manifests)
// and a node_modules without an installer record are edited in place.
func TestRawAnswerInvalidation(t *testing.T) {
	for _, tc := range []struct {
		name      string
		installed bool // the tree holds npm's record of the install
		change    func(t *testing.T, ws string)
	}{
		// A node_modules without an installer record: every file is
		// stamped, and an edit in place is seen.
		{"no installer record: SYMPOSIUM.toml edited in place", false, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/toml/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
		}},
		{"no installer record: SYMPOSIUM.toml added", false, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/@s/scoped/SYMPOSIUM.toml": ""})
		}},
		{"no installer record: SYMPOSIUM.toml removed", false, func(t *testing.T, ws string) {
			if err := os.Remove(filepath.Join(ws, "node_modules/toml/SYMPOSIUM.toml")); err != nil {
				t.Fatal(err)
			}
		}},
		{"no installer record: package.json gains a symposium object in place", false, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/plain/package.json": `{"name":"plain","version":"1.0.0","symposium":{}}`})
		}},
		{"no installer record: SKILL.md added deep in skills", false, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/plain/skills/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
		}},
		{"no installer record: member's own copy gains a plugin", false, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"packages/a/node_modules/own/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
		}},
		// Installed content, as the installer changes it.
		{"reinstall rewrites a package and the record", true, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/toml/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
			recordInstall(t, ws)
		}},
		{"package replaced by a new directory", true, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/.toml-new/package.json": `{"name":"toml","version":"1.0.0","symposium":{"skills":[]}}`})
			if err := os.RemoveAll(filepath.Join(ws, "node_modules/toml")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(filepath.Join(ws, "node_modules/.toml-new"), filepath.Join(ws, "node_modules/toml")); err != nil {
				t.Fatal(err)
			}
			recordInstall(t, ws)
		}},
		{"package uninstalled", true, func(t *testing.T, ws string) {
			if err := os.RemoveAll(filepath.Join(ws, "node_modules/toml")); err != nil {
				t.Fatal(err)
			}
			recordInstall(t, ws)
		}},
		{"package installed", true, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/new/package.json": `{"name":"new","version":"1.0.0","symposium":{}}`})
			recordInstall(t, ws)
		}},
		{"reinstall gives a member its own copy a plugin", true, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"packages/a/node_modules/own/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
			recordInstall(t, ws)
		}},
		// What users edit stays stamped, installer record or not.
		{"linked member's SYMPOSIUM.toml edited in place", true, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"packages/b/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
		}},
		{"linked member's SYMPOSIUM.toml removed", true, func(t *testing.T, ws string) {
			if err := os.Remove(filepath.Join(ws, "packages/b/SYMPOSIUM.toml")); err != nil {
				t.Fatal(err)
			}
		}},
		{"workspaces field changed", true, func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"package.json": `{"name":"root","private":true,"workspaces":["packages/b"]}`})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			deps := cacheWorkspace(t, ws)
			if tc.installed {
				deps = installedWorkspace(t, ws)
			}
			settle()
			var computed atomic.Int32
			cached, fresh := rawHooks(t, ws, deps, &computed)
			pmtest.CheckServedEncoded(t, cached, fresh, &computed, func() { tc.change(t, ws) })
		})
	}
}

// TestRawAnswerTrustsInstalledContent documents the trade the cache makes
// (see installrecord.go): under node_modules holding an installer record,
// a hand edit inside an installed package, the record unchanged, is not
// seen: the answer persisted before it is served until the installer next
// runs, and then the edit is seen.
func TestRawAnswerTrustsInstalledContent(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(t *testing.T, ws string)
	}{
		{"SYMPOSIUM.toml edited in place", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/toml/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
		}},
		{"package.json gains a symposium object in place", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/plain/package.json": `{"name":"plain","version":"1.0.0","symposium":{}}`})
		}},
		{"member's own copy gains a plugin in place", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"packages/a/node_modules/own/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			deps := installedWorkspace(t, ws)
			settle()
			var computed atomic.Int32
			cached, fresh := rawHooks(t, ws, deps, &computed)
			first := cached.Run(t).Offers
			tc.edit(t, ws)
			computed.Store(0)
			if got := cached.Run(t).Offers; computed.Load() != 0 || !maps.Equal(pmtest.OfferSet(got), pmtest.OfferSet(first)) {
				t.Fatalf("after a hand edit of installed content the hook computed %d answers (want 0: the persisted answer is trusted) and offered %v, first %v",
					computed.Load(), pmtest.OfferSet(got), pmtest.OfferSet(first))
			}
			want := fresh.Run(t).Offers
			if maps.Equal(pmtest.OfferSet(want), pmtest.OfferSet(first)) {
				t.Fatal("the edit does not change the answer: the case tests nothing")
			}
			recordInstall(t, ws)
			computed.Store(0)
			got := cached.Run(t).Offers
			if computed.Load() != 1 {
				t.Errorf("after the installer ran the hook computed %d answers, want 1", computed.Load())
			}
			pmtest.CheckInvalidation(t, true, first, got, want)
		})
	}
}
