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
// with a SYMPOSIUM.toml, with its Cargo.lock, and returns the dependencies
// as list_deps reports them.
func genVendoredWorkspace(tb testing.TB, ws string, n int) []protocol.PackageID {
	tb.Helper()
	files := map[string]string{
		".cargo/config.toml": "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"vendor\"\n",
		"src/lib.rs":         "",
	}
	var decl, lock, names strings.Builder
	var ids []protocol.PackageID
	for i := range n {
		name := fmt.Sprintf("dep-%04d", i)
		fmt.Fprintf(&decl, "%s = \"1\"\n", name)
		fmt.Fprintf(&names, "%q,", name)
		fmt.Fprintf(&lock, "\n[[package]]\nname = %q\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n", name)
		crate := map[string]string{"Cargo.toml": fmt.Sprintf("[package]\nname = %q\nversion = \"1.0.0\"\n", name)}
		if i%10 == 0 {
			crate["SYMPOSIUM.toml"] = "[defaults]\nskills = false\n"
		}
		crate[".cargo-checksum.json"] = cargoChecksum(crate)
		for f, content := range crate {
			files["vendor/"+name+"/"+f] = content
		}
		ids = append(ids, protocol.PackageID{PM: "cargo", Name: name, Version: "1.0.0"})
	}
	files["Cargo.toml"] = "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\n" + decl.String()
	files["Cargo.lock"] = "version = 3\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [" + strings.TrimSuffix(names.String(), ",") + "]\n" + lock.String()
	cargotest.WriteFiles(tb, ws, files)
	return ids
}

// BenchmarkWholeHook measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) with 100, 400 and 2,000
// vendored dependencies, one in ten with a plugin: cached (target ≤ 1.25×
// the null PM) and cold, interleaved with the null PM sent the same
// requests. load1 is the one-minute load average at the end.
func BenchmarkWholeHook(b *testing.B) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-cargo/cmd/symposium-pm-cargo", b.TempDir())
	for _, n := range benchkit.WholeHookSizes {
		b.Run(fmt.Sprintf("deps=%d", n), func(b *testing.B) {
			ws := filepath.Join(b.TempDir(), "ws")
			deps := genVendoredWorkspace(b, ws, n)
			home := b.TempDir()
			env := map[string]string{"CARGO_HOME": home, "HOME": home}
			variants := benchkit.WholeHookVariants(b, bin, ws, env, deps, n/10, 5)
			benchkit.ReportRatios(b, benchkit.Interleave(b, 20, variants...), "")
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
