package cargopm_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargopm"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// cargoChecksum returns the .cargo-checksum.json `cargo vendor` writes
// for a crate of the given files: the SHA-256 of each file and of the
// .crate (here of nothing: no archive was unpacked).
func cargoChecksum(files map[string]string) string {
	sums := map[string]string{}
	for name, content := range files {
		sums[name] = fmt.Sprintf("%x", sha256.Sum256([]byte(content)))
	}
	data, err := json.Marshal(map[string]any{"files": sums, "package": fmt.Sprintf("%x", sha256.Sum256(nil))})
	if err != nil {
		panic(err) // a map of strings always encodes
	}
	return string(data)
}

// genVendoredWorkspace writes a crate depending on n crates vendored in
// vendor/ as `cargo vendor` lays them out (source replacement in
// .cargo/config.toml, a .cargo-checksum.json in every crate), one in ten
// with a SYMPOSIUM.toml, with its Cargo.lock as cargo writes it, and
// returns the dependencies as list_deps reports them. cargo metadata
// resolves it offline without changing the lockfile.
func genVendoredWorkspace(tb testing.TB, ws string, n int) []protocol.PackageID {
	tb.Helper()
	files := map[string]string{".cargo/config.toml": vendoredConfig, "src/lib.rs": ""}
	var decl strings.Builder
	app := lockPkg{name: "app", version: "0.1.0"}
	pkgs := []lockPkg{}
	var ids []protocol.PackageID
	for i := range n {
		name := fmt.Sprintf("dep-%04d", i)
		fmt.Fprintf(&decl, "%s = \"1\"\n", name)
		app.deps = append(app.deps, name)
		pkgs = append(pkgs, lockPkg{name: name, version: "1.0.0", registry: true})
		vendorCrate(files, name, i%10 == 0)
		ids = append(ids, protocol.PackageID{PM: "cargo", Name: name, Version: "1.0.0"})
	}
	files["Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\n" + decl.String()
	files["Cargo.lock"] = cargoLock(append(pkgs, app))
	cargotest.WriteFiles(tb, ws, files)
	return ids
}

// BenchmarkWholeHook measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) with 100, 400 and 2,000
// vendored dependencies, one in ten with a plugin: cached (target ≤ 1.25×
// the null PM) and cold, interleaved with the null PM sent the same
// requests and with `cargo metadata --offline --locked` on the same
// workspace ("metadata", in the first metadataRounds rounds; absent without
// cargo), which resolves the same graph from the vendored sources. load1
// is the one-minute load average at the end.
func BenchmarkWholeHook(b *testing.B) {
	const rounds, coldRounds, metadataRounds = 20, 5, 3
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-cargo/cmd/symposium-pm-cargo", b.TempDir())
	for _, n := range benchkit.WholeHookSizes {
		b.Run(fmt.Sprintf("deps=%d", n), func(b *testing.B) {
			ws := filepath.Join(b.TempDir(), "ws")
			deps := genVendoredWorkspace(b, ws, n)
			home := b.TempDir()
			env := map[string]string{"CARGO_HOME": home, "HOME": home}
			tool := metadataVariant(b, ws, home, n+1, metadataRounds)
			variants := append(benchkit.WholeHookVariants(b, bin, ws, env, deps, n/10, coldRounds), tool...)
			benchkit.ReportRatios(b, benchkit.Interleave(b, rounds, variants...), "metadata")
			benchkit.ReportLoad(b)
		})
	}
}

// BenchmarkWholeHookCachedInProcess measures list_deps and active_plugins
// answered from the persisted cache, without process start-up, at 2,000
// vendored dependencies.
func BenchmarkWholeHookCachedInProcess(b *testing.B) {
	ws := filepath.Join(b.TempDir(), "ws")
	deps := genVendoredWorkspace(b, ws, 2000)
	home := b.TempDir()
	p := cargopm.New()
	if err := p.Initialize(b.Context(), &pmserver.Session{ProtocolVersion: 1, Workspace: ws, CacheDir: b.TempDir(),
		Env: pmserver.NewEnv(map[string]string{"CARGO_HOME": home, "HOME": home}), Logger: slog.New(slog.DiscardHandler)}); err != nil {
		b.Fatal(err)
	}
	for range 2 {
		if _, err := p.ListDeps(b.Context()); err != nil {
			b.Fatal(err)
		}
		if _, err := p.ActivePlugins(b.Context(), deps); err != nil {
			b.Fatal(err)
		}
		time.Sleep(60 * time.Millisecond)
	}
	for b.Loop() {
		if _, err := p.ListDeps(b.Context()); err != nil {
			b.Fatal(err)
		}
		if offers, err := p.ActivePlugins(b.Context(), deps); err != nil || len(offers) != 200 {
			b.Fatal(len(offers), err)
		}
	}
}
