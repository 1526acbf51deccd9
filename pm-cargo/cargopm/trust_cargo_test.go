package cargopm

import (
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// realCargoCrates are the loopback registry's crates for the tests that
// let the real cargo change what it owns: plug 1.0.0 and 1.1.0, each with
// a plugin of its own name, and plain 1.0.0 without one.
var realCargoCrates = []fakeregistry.Crate{
	{Name: "plug", Version: "1.0.0", Files: map[string]string{"SYMPOSIUM.toml": "name = \"plug-one\"\n"}},
	{Name: "plug", Version: "1.1.0", Files: map[string]string{"SYMPOSIUM.toml": "name = \"plug-two\"\n"}},
	{Name: "plain", Version: "1.0.0"},
}

// appManifest is the workspace's Cargo.toml with deps as its
// [dependencies] table.
func appManifest(deps string) map[string]string {
	return map[string]string{"Cargo.toml": "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n" + deps, "src/lib.rs": ""}
}

// cargoStep is one change the real cargo makes to what it owns; each is
// checked with a cache of its own: computed first, then served encoded,
// then, after the change, computed again and equal to a fresh answer that
// differs from the first.
type cargoStep struct {
	name   string
	change func(t *testing.T)
}

func runCargoSteps(t *testing.T, hook func(cache string, computed *atomic.Int32) pmtest.Hook, steps []cargoStep) {
	t.Helper()
	for _, st := range steps {
		ok := t.Run(st.name, func(t *testing.T) {
			// What cargo wrote last must be older than the racy window for
			// the first answer to be persisted.
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			var computed atomic.Int32
			pmtest.CheckServedEncoded(t, hook(t.TempDir(), &computed), hook("", &computed), &computed, func() { st.change(t) })
		})
		if !ok {
			return // the next steps start from this one's state
		}
	}
}

// TestOwnedRecordRealCargoVendor: crates the real `cargo vendor` wrote are
// trusted (they carry .cargo-checksum.json) and each change `cargo vendor`
// makes to the vendor directory is seen by the next hook: vendoring again
// with versioned directories (the same dependencies and Cargo.lock), after
// an upgrade, and after a dependency is removed.
func TestOwnedRecordRealCargoVendor(t *testing.T) {
	cargotest.Cargo(t)
	reg, err := fakeregistry.New(realCargoCrates...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	dir := t.TempDir()
	ws, pmHome := filepath.Join(dir, "ws"), filepath.Join(dir, "pm-home")
	cargotest.WriteFiles(t, ws, appManifest("plug = \"=1.0.0\"\nplain = \"1\"\n"))
	env.Run(t, ws, "generate-lockfile")
	// cargo reads the loopback registry through its CARGO_HOME's source
	// replacement, which `cargo vendor` ignores unless told; the PM reads
	// the vendored source from its own CARGO_HOME's configuration.
	vendor := func(t *testing.T, args ...string) {
		env.Run(t, ws, append([]string{"vendor", "--respect-source-config"}, args...)...)
	}
	vendor(t)
	if !ownedBy(filepath.Join(ws, "vendor", "plug"), checksumFile) {
		t.Fatalf("cargo vendor wrote no %s in vendor/plug: the test does not exercise crates cargo owns", checksumFile)
	}
	cargotest.WriteFiles(t, pmHome, map[string]string{"config.toml": "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"" + filepath.ToSlash(filepath.Join(ws, "vendor")) + "\"\n"})
	deps := ids("plug@1.0.0", "plug@1.1.0", "plain@1.0.0")
	hook := func(cache string, computed *atomic.Int32) pmtest.Hook {
		return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), computed} }, Deps: deps,
			Options: host.Options{Workspace: ws, CacheDir: cache, Env: map[string]string{"CARGO_HOME": pmHome, "HOME": pmHome}}}
	}
	runCargoSteps(t, hook, []cargoStep{
		{"vendored again into versioned directories", func(t *testing.T) { vendor(t, "--versioned-dirs") }},
		{"vendored again after an upgrade", func(t *testing.T) {
			cargotest.WriteFiles(t, ws, appManifest("plug = \"=1.1.0\"\nplain = \"1\"\n"))
			env.Run(t, ws, "generate-lockfile")
			vendor(t, "--versioned-dirs")
		}},
		{"vendored again after the dependency is removed", func(t *testing.T) {
			cargotest.WriteFiles(t, ws, appManifest("plain = \"1\"\n"))
			env.Run(t, ws, "generate-lockfile")
			vendor(t, "--versioned-dirs")
		}},
	})
}

// TestOwnedRecordRealCargoUnpack: crates the real cargo unpacked under
// $CARGO_HOME/registry/src are trusted (they carry .cargo-ok), and a
// version cargo unpacks next to them is seen by the next hook.
func TestOwnedRecordRealCargoUnpack(t *testing.T) {
	cargotest.Cargo(t)
	reg, err := fakeregistry.New(realCargoCrates...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	ws := filepath.Join(t.TempDir(), "ws")
	cargotest.WriteFiles(t, ws, appManifest("plug = \"=1.0.0\"\n"))
	// cargo metadata resolves, downloads and unpacks every dependency.
	env.Run(t, ws, "metadata", "--format-version", "1")
	srcs, _ := filepath.Glob(filepath.Join(env.CargoHome, "registry", "src", "*", "plug-1.0.0"))
	if len(srcs) != 1 || !ownedBy(srcs[0], unpackedMarker) {
		t.Fatalf("cargo unpacked plug 1.0.0 as %v, want one directory with %s", srcs, unpackedMarker)
	}
	deps := ids("plug@1.0.0", "plug@1.1.0")
	hook := func(cache string, computed *atomic.Int32) pmtest.Hook {
		return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), computed} }, Deps: deps,
			Options: host.Options{Workspace: ws, CacheDir: cache, Env: map[string]string{"CARGO_HOME": env.CargoHome, "HOME": env.CargoHome}}}
	}
	runCargoSteps(t, hook, []cargoStep{
		{"another version unpacked", func(t *testing.T) {
			cargotest.WriteFiles(t, ws, appManifest("plug = \"=1.1.0\"\n"))
			env.Run(t, ws, "metadata", "--format-version", "1")
		}},
	})
	if _, err := os.Stat(filepath.Join(filepath.Dir(srcs[0]), "plug-1.1.0", unpackedMarker)); err != nil {
		t.Errorf("cargo did not unpack plug 1.1.0: %v", err)
	}
}
