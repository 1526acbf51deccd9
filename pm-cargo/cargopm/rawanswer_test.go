package cargopm

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
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

// vendorChecksum writes in the crate at dir the .cargo-checksum.json
// `cargo vendor` writes: the SHA-256 of each of the crate's files.
func vendorChecksum(t *testing.T, dir string) {
	t.Helper()
	sums := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || d.Name() == checksumFile {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		sums[filepath.ToSlash(rel)] = fmt.Sprintf("%x", sha256.Sum256(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(map[string]any{"files": sums, "package": nil})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, checksumFile), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// revendor does to crate name in ws/vendor what `cargo vendor` does to a
// crate it vendors without a version suffix: the directory is removed and
// written again, with its .cargo-checksum.json. files nil only removes it.
func revendor(t *testing.T, ws, name string, files map[string]string) {
	t.Helper()
	dir := filepath.Join(ws, "vendor", name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if files == nil {
		return
	}
	cargotest.WriteFiles(t, dir, files)
	vendorChecksum(t, dir)
}

// ownedLayout writes, over cacheWorkspace's, what cargo owns: every
// vendored crate with its .cargo-checksum.json, and under CARGO_HOME a
// registry source e 1.0.0 with a plugin, completely unpacked (.cargo-ok),
// and f 1.0.0 with a plugin, still being unpacked (no .cargo-ok yet).
func ownedLayout(t *testing.T, dir string) (ws, home string) {
	t.Helper()
	ws, home = cacheWorkspace(t, dir)
	for _, c := range []string{"a", "b", "c"} {
		vendorChecksum(t, filepath.Join(ws, "vendor", c))
	}
	cargotest.WriteFiles(t, home, map[string]string{
		ownedSrc + "/e-1.0.0/Cargo.toml":     "[package]\nname = \"e\"\nversion = \"1.0.0\"\n",
		ownedSrc + "/e-1.0.0/SYMPOSIUM.toml": "name = \"e-plugin\"\n",
		ownedSrc + "/e-1.0.0/.cargo-ok":      "{\"v\":1}",
		ownedSrc + "/f-1.0.0/Cargo.toml":     "[package]\nname = \"f\"\nversion = \"1.0.0\"\n",
		ownedSrc + "/f-1.0.0/SYMPOSIUM.toml": "name = \"f-plugin\"\n",
	})
	return ws, home
}

// ownedSrc is the registry source directory ownedLayout unpacks into,
// relative to CARGO_HOME.
const ownedSrc = "registry/src/index.crates.io-1949cf8c6b5b557f"

// ownedDeps are the dependencies the tests of ownedLayout ask about:
// d is vendored by none until a case vendors it, e 1.1.0 unpacked by none
// until a case unpacks it.
var ownedDeps = ids("a@1.0.0", "b@1.0.0", "c@1.0.0", "d@1.0.0", "e@1.0.0", "e@1.1.0", "f@1.0.0", "local@0.5.0")

// ownedHook returns the hook of ownedLayout's workspace with cache as its
// cache directory ("" for none), counting in computed the answers computed
// rather than served encoded.
func ownedHook(ws, home, cache string, computed *atomic.Int32) pmtest.Hook {
	return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), computed} }, Deps: ownedDeps,
		Options: host.Options{Workspace: ws, CacheDir: cache, Env: map[string]string{"CARGO_HOME": home, "HOME": home}}}
}

// TestRawAnswerOwnedInvalidation: an answer read from crates cargo owns
// (vendored with .cargo-checksum.json, unpacked with .cargo-ok) is not
// stamped file by file, but each change cargo makes to them, and each
// change a user makes to what is theirs, makes the next hook compute the
// answer again, exactly as a PM without a cache answers it.
func TestRawAnswerOwnedInvalidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, ws, home string)
	}{
		{"cargo vendor rewrites a crate (a git dependency at another revision)", func(t *testing.T, ws, _ string) {
			revendor(t, ws, "b", map[string]string{"Cargo.toml": "[package]\nname = \"b\"\nversion = \"1.0.0\"\n", "SYMPOSIUM.toml": "name = \"b-renamed\"\n"})
		}},
		{"cargo vendor removes a crate", func(t *testing.T, ws, _ string) {
			revendor(t, ws, "b", nil)
		}},
		{"cargo vendor adds a crate", func(t *testing.T, ws, _ string) {
			revendor(t, ws, "d", map[string]string{"Cargo.toml": "[package]\nname = \"d\"\nversion = \"1.0.0\"\n", "SYMPOSIUM.toml": "name = \"d-plugin\"\n"})
		}},
		{"cargo vendor writes a versioned directory beside", func(t *testing.T, ws, _ string) {
			revendor(t, ws, "a-1.0.0", map[string]string{"Cargo.toml": "[package]\nname = \"a\"\nversion = \"1.0.0\"\n", "SYMPOSIUM.toml": "name = \"a-plugin\"\n"})
			revendor(t, ws, "a", nil)
		}},
		{"Cargo.lock changes with vendor/ checked out in place", func(t *testing.T, ws, _ string) {
			cargotest.WriteFiles(t, ws, map[string]string{
				"Cargo.lock":              strings.Replace(cacheLock, "name = \"b\"\nversion = \"1.0.0\"\n", "name = \"b\"\nversion = \"1.0.0\"\nchecksum = \"0000000000000000000000000000000000000000000000000000000000000000\"\n", 1),
				"vendor/b/SYMPOSIUM.toml": "name = \"b-checked-out\"\n",
			})
			vendorChecksum(t, filepath.Join(ws, "vendor", "b"))
		}},
		{"cargo unpacks another version", func(t *testing.T, _, home string) {
			cargotest.WriteFiles(t, home, map[string]string{
				ownedSrc + "/e-1.1.0/Cargo.toml":     "[package]\nname = \"e\"\nversion = \"1.1.0\"\n",
				ownedSrc + "/e-1.1.0/SYMPOSIUM.toml": "name = \"e-plugin\"\n",
				ownedSrc + "/e-1.1.0/.cargo-ok":      "{\"v\":1}",
			})
		}},
		{"cargo removes an unpacked source", func(t *testing.T, _, home string) {
			if err := os.RemoveAll(filepath.Join(home, ownedSrc, "e-1.0.0")); err != nil {
				t.Fatal(err)
			}
		}},
		{"cargo finishes unpacking a source", func(t *testing.T, _, home string) {
			cargotest.WriteFiles(t, home, map[string]string{ownedSrc + "/f-1.0.0/.cargo-ok": "{\"v\":1}"})
		}},
		{"path dependency's metadata edited in place", func(t *testing.T, ws, _ string) {
			cargotest.WriteFiles(t, filepath.Dir(ws), map[string]string{"local/Cargo.toml": "[package]\nname = \"local\"\nversion = \"0.5.0\"\n\n[package.metadata.symposium]\nname = \"renamed\"\n"})
		}},
		{"cargo configuration edited", func(t *testing.T, ws, _ string) {
			cargotest.WriteFiles(t, ws, map[string]string{".cargo/config.toml": ""})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, home := ownedLayout(t, t.TempDir())
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var computed atomic.Int32
			pmtest.CheckServedEncoded(t, ownedHook(ws, home, t.TempDir(), &computed), ownedHook(ws, home, "", &computed), &computed,
				func() { tc.change(t, ws, home) })
		})
	}
}

// TestRawAnswerOwnedHandEdit documents the trade of trusting what cargo
// owns: a hand edit inside a crate cargo vendored or unpacked, which cargo
// itself would refuse or never make, is not seen until cargo next changes
// the directory it sits in (or the cache is deleted); the same edit in a
// vendored crate without .cargo-checksum.json, which cargo does not own,
// is seen at once.
func TestRawAnswerOwnedHandEdit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout func(t *testing.T, dir string) (ws, home string)
		change func(t *testing.T, ws, home string)
		seen   bool
	}{
		{"vendored plugin's SYMPOSIUM.toml edited in place", ownedLayout, func(t *testing.T, ws, _ string) {
			cargotest.WriteFiles(t, ws, map[string]string{"vendor/b/SYMPOSIUM.toml": "name = \"b-edited\"\n"})
		}, false},
		{"SYMPOSIUM.toml added to a vendored crate", ownedLayout, func(t *testing.T, ws, _ string) {
			cargotest.WriteFiles(t, ws, map[string]string{"vendor/a/SYMPOSIUM.toml": "name = \"a-plugin\"\n"})
		}, false},
		{"unpacked plugin's SYMPOSIUM.toml edited in place", ownedLayout, func(t *testing.T, _, home string) {
			cargotest.WriteFiles(t, home, map[string]string{ownedSrc + "/e-1.0.0/SYMPOSIUM.toml": "name = \"e-edited\"\n"})
		}, false},
		{"no .cargo-checksum.json: SYMPOSIUM.toml edited in place", cacheWorkspace, func(t *testing.T, ws, _ string) {
			cargotest.WriteFiles(t, ws, map[string]string{"vendor/b/SYMPOSIUM.toml": "name = \"b-edited\"\n"})
		}, true},
		{"no .cargo-checksum.json: SYMPOSIUM.toml added", cacheWorkspace, func(t *testing.T, ws, _ string) {
			cargotest.WriteFiles(t, ws, map[string]string{"vendor/a/SYMPOSIUM.toml": "name = \"a-plugin\"\n"})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws, home := tc.layout(t, t.TempDir())
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var computed atomic.Int32
			cached, fresh := ownedHook(ws, home, t.TempDir(), &computed), ownedHook(ws, home, "", &computed)
			if tc.seen {
				pmtest.CheckServedEncoded(t, cached, fresh, &computed, func() { tc.change(t, ws, home) })
				return
			}
			first := cached.Run(t).Offers
			cached.Run(t) // served encoded from here on
			tc.change(t, ws, home)
			computed.Store(0)
			got := cached.Run(t).Offers
			if n := computed.Load(); n != 0 {
				t.Errorf("after a hand edit inside cargo's content the cached PM computed %d answers, want 0 (served encoded)", n)
			}
			if !maps.Equal(pmtest.OfferSet(got), pmtest.OfferSet(first)) {
				t.Errorf("after a hand edit inside cargo's content the cached PM answers %v, want the first answer %v", pmtest.OfferSet(got), pmtest.OfferSet(first))
			}
			if maps.Equal(pmtest.OfferSet(fresh.Run(t).Offers), pmtest.OfferSet(first)) {
				t.Errorf("the edit does not change a fresh answer: the case tests nothing")
			}
		})
	}
}
