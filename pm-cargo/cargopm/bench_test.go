package cargopm_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargopm"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Sizes of the generated benchmark workspace.
const (
	benchMembers  = 60  // workspace members
	benchDirect   = 450 // distinct registry crates depended on directly
	benchLeaves   = 600 // crates only depended on transitively
	depsPerMember = 10
)

// benchWorkspace generates a workspace of benchMembers members with
// benchDirect distinct direct registry deps and more than 1,000 locked
// packages, resolved by the real cargo against the fake registry, with every
// crate downloaded into a private CARGO_HOME so `cargo metadata --offline`
// can run.
func benchWorkspace(b *testing.B) (ws string, env *cargotest.Env) {
	b.Helper()
	var crates []fakeregistry.Crate
	for i := range benchLeaves {
		crates = append(crates, fakeregistry.Crate{Name: fmt.Sprintf("leaf-%03d", i), Version: "1.0.0"})
	}
	for i := range benchDirect {
		crates = append(crates, fakeregistry.Crate{Name: fmt.Sprintf("mid-%03d", i), Version: "0.3.1", Deps: []fakeregistry.Dep{
			{Name: fmt.Sprintf("leaf-%03d", (2*i)%benchLeaves), Req: "1"},
			{Name: fmt.Sprintf("leaf-%03d", (2*i+1)%benchLeaves), Req: "1"},
		}})
	}
	reg, err := fakeregistry.New(crates...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(reg.Close)
	env = cargotest.New(b, reg)
	ws = filepath.Join(b.TempDir(), "ws")
	files := map[string]string{
		"Cargo.toml": "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n\n[workspace.dependencies]\nmid-000 = \"0.3\"\n",
	}
	for m := range benchMembers {
		var deps strings.Builder
		for k := range depsPerMember {
			j := (m*(benchDirect/benchMembers) + k) % benchDirect
			fmt.Fprintf(&deps, "mid-%03d = \"0.3\"\n", j)
		}
		if m > 0 {
			fmt.Fprintf(&deps, "member-%02d = { path = \"../member-%02d\" }\nmid-000 = { workspace = true }\n", m-1, m-1)
		}
		files[fmt.Sprintf("crates/member-%02d/Cargo.toml", m)] = fmt.Sprintf("[package]\nname = \"member-%02d\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n%s\n[dev-dependencies]\nmid-%03d = \"0.3\"\n", m, deps.String(), (m*7+3)%benchDirect)
		files[fmt.Sprintf("crates/member-%02d/src/lib.rs", m)] = ""
	}
	cargotest.WriteFiles(b, ws, files)
	env.Run(b, ws, "fetch")
	return ws, env
}

// BenchmarkHookPath measures spawn → initialize → list_deps → exit of
// symposium-pm-cargo on a large workspace, cold (empty cache directory) and
// with the persisted cache, side by side with `cargo metadata --offline` on
// the same workspace, the SDK's null PM and a Go binary that only starts
// and exits.
//
// The machine is shared, so each benchmark iteration interleaves the
// variants (hookRounds samples of each fast one, metadataRounds of cargo
// metadata) and reports their medians in milliseconds of wall time (-ms,
// spawn to exit; the host's decoding of the answer is not timed, see
// benchkit.Hook) and of the child's CPU time (-cpu-ms, steadier under
// load), plus the two
// ratios the targets are stated in, on wall time: cached/nullpm (target
// ≤ 1.25) and metadata/cached (target ≥ 30).
func BenchmarkHookPath(b *testing.B) {
	ws, env := benchWorkspace(b)
	b.Run("hook-path", func(b *testing.B) { benchHookPath(b, ws, env) })
	b.Run("inprocess", func(b *testing.B) { benchInProcess(b, ws, env) })
}

func benchHookPath(b *testing.B, ws string, env *cargotest.Env) {
	const hookRounds, metadataRounds = 50, 3
	cargo := cargotest.Cargo(b)
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-cargo/cmd/symposium-pm-cargo", b.TempDir())
	deps := benchkit.HookPath(b, bin, nil, ws, b.TempDir())
	if len(deps) < 400 {
		b.Fatalf("the workspace has %d direct deps, want ≥ 400", len(deps))
	}
	lock, _ := os.ReadFile(filepath.Join(ws, "Cargo.lock"))
	b.Logf("workspace: %d members, %d direct deps, %d locked packages", benchMembers, len(deps), strings.Count(string(lock), "[[package]]"))
	variants := append(benchkit.HookVariants(b, bin, ws, len(deps)), benchkit.Variant{
		Name: "metadata", Rounds: metadataRounds, Run: func() benchkit.Hook {
			cmd := exec.Command(cargo, "metadata", "--format-version", "1", "--offline")
			cmd.Env = env.Environ()
			return benchkit.RunCmd(b, cmd, ws)
		}})
	benchkit.ReportRatios(b, benchkit.Interleave(b, hookRounds, variants...), "metadata")
	b.ReportMetric(benchMembers, "members")
	b.ReportMetric(float64(len(deps)), "direct-deps")
	b.ReportMetric(float64(strings.Count(string(lock), "[[package]]")), "locked-pkgs")
	benchkit.ReportLoad(b)
}

// benchInProcess measures the PM's methods without process start: list_deps
// from the persisted cache and cold, active_plugins over every direct
// dependency (all unpacked in CARGO_HOME), and fetch with update "none".
func benchInProcess(b *testing.B, ws string, env *cargotest.Env) {
	vars := map[string]string{}
	for _, kv := range env.Vars {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	newPM := func(cache string) *cargopm.PM {
		p := cargopm.New()
		if err := p.Initialize(context.Background(), &pmserver.Session{Workspace: ws, CacheDir: cache, Env: pmserver.NewEnv(vars), Logger: slog.New(slog.DiscardHandler)}); err != nil {
			b.Fatal(err)
		}
		return p
	}
	ctx := context.Background()
	cache := b.TempDir()
	deps, err := newPM(cache).ListDeps(ctx)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("list_deps-cached", func(b *testing.B) {
		for b.Loop() {
			if _, err := newPM(cache).ListDeps(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("list_deps-cold", func(b *testing.B) {
		for b.Loop() {
			if _, err := newPM("").ListDeps(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run(fmt.Sprintf("active_plugins-%d", len(deps)), func(b *testing.B) {
		p := newPM(cache)
		for b.Loop() {
			if _, err := p.ActivePlugins(ctx, deps); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fetch-none", func(b *testing.B) {
		p := newPM(cache)
		id := deps[len(deps)/2]
		for b.Loop() {
			if _, err := p.Fetch(ctx, id, protocol.UpdateNone); err != nil {
				b.Fatal(err)
			}
		}
	})
}
