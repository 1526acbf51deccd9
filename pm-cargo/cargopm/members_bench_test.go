package cargopm_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// memberPool is how many vendored crates a members workspace depends on,
// whatever its number of members.
const memberPool = 200

// genMembersWorkspace writes a virtual workspace of m members
// (crates/m-NNNN, members = ["crates/*"]) over memberPool crates vendored
// as `cargo vendor` lays them out, one in ten with a SYMPOSIUM.toml, with
// its Cargo.lock as cargo writes it. Member i depends by path on members
// i-1 and i/2 and declares max(3, ⌈memberPool/m⌉) consecutive crates of
// the pool, starting where member i-1 stopped, so every size depends on
// the whole pool: what grows is the members, their manifests and the
// dependency entries they declare. It returns the dependencies as
// list_deps reports them (members are never reported) and how many of
// them offer a plugin.
func genMembersWorkspace(tb testing.TB, ws string, m int) (deps []protocol.PackageID, offers int) {
	tb.Helper()
	files := map[string]string{
		".cargo/config.toml": vendoredConfig,
		"Cargo.toml":         "[workspace]\nmembers = [\"crates/*\"]\nresolver = \"2\"\n",
	}
	var pkgs []lockPkg
	for i := range memberPool {
		name := fmt.Sprintf("dep-%04d", i)
		vendorCrate(files, name, i%10 == 0)
		pkgs = append(pkgs, lockPkg{name: name, version: "1.0.0", registry: true})
		deps = append(deps, protocol.PackageID{PM: "cargo", Name: name, Version: "1.0.0"})
		if i%10 == 0 {
			offers++
		}
	}
	per := max(3, (memberPool+m-1)/m)
	for i := range m {
		name := fmt.Sprintf("m-%04d", i)
		p := lockPkg{name: name, version: "0.1.0"}
		var manifest strings.Builder
		fmt.Fprintf(&manifest, "[package]\nname = %q\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n", name)
		var paths []int
		if i > 0 {
			paths = append(paths, i-1)
		}
		if i/2 < i-1 {
			paths = append(paths, i/2)
		}
		for _, j := range paths {
			dep := fmt.Sprintf("m-%04d", j)
			fmt.Fprintf(&manifest, "%s = { path = \"../%s\" }\n", dep, dep)
			p.deps = append(p.deps, dep)
		}
		for k := range per {
			dep := fmt.Sprintf("dep-%04d", (i*per+k)%memberPool)
			fmt.Fprintf(&manifest, "%s = \"1\"\n", dep)
			p.deps = append(p.deps, dep)
		}
		files["crates/"+name+"/Cargo.toml"] = manifest.String()
		files["crates/"+name+"/src/lib.rs"] = ""
		pkgs = append(pkgs, p)
	}
	files["Cargo.lock"] = cargoLock(pkgs)
	cargotest.WriteFiles(tb, ws, files)
	return deps, offers
}

// BenchmarkMembers measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) on a workspace of 1, 100
// and 1,000 members depending on the same 200 vendored crates, one in ten
// with a plugin (see genMembersWorkspace): cached and cold (a cold hook
// should stay linear in deps plus members), interleaved with the null PM
// sent the same requests, a Go binary that only starts and exits, and
// `cargo metadata --offline --locked` on the same workspace ("metadata",
// absent without cargo), which resolves the whole graph from the vendored
// sources. Every run checks the number of deps listed and of plugins
// offered (and cargo's, of packages described). load1 is the one-minute
// load average at the end.
func BenchmarkMembers(b *testing.B) {
	const rounds, coldRounds, metadataRounds = 20, 5, 3
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-cargo/cmd/symposium-pm-cargo", b.TempDir())
	bare := benchkit.BareGo(b)
	for _, m := range []int{1, 100, 1000} {
		b.Run(fmt.Sprintf("members=%d", m), func(b *testing.B) {
			ws := filepath.Join(b.TempDir(), "ws")
			deps, offers := genMembersWorkspace(b, ws, m)
			home := b.TempDir()
			env := map[string]string{"CARGO_HOME": home, "HOME": home}
			tool := metadataVariant(b, ws, home, m+len(deps), metadataRounds)
			barego := benchkit.Variant{Name: "barego",
				Run:  func() benchkit.Hook { return benchkit.RunCmd(b, exec.Command(bare), ws) },
				Peak: func() int64 { c := exec.Command(bare); c.Dir = ws; return benchkit.PeakRSS(b, c) }}
			variants := append([]benchkit.Variant{barego}, benchkit.WholeHookVariants(b, bin, ws, env, deps, offers, coldRounds)...)
			benchkit.ReportRatios(b, benchkit.Interleave(b, rounds, append(variants, tool...)...), "metadata")
			b.ReportMetric(float64(len(deps)), "deps")
			benchkit.ReportLoad(b)
		})
	}
}
