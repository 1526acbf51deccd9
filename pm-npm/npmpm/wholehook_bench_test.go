package npmpm

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// genHookProject writes a project declaring n dependencies, each installed
// in node_modules, one in ten with a SYMPOSIUM.toml, and returns them as
// list_deps reports them. installed leaves it as npm 7 and later do: with
// package-lock.json and npm's record of the install,
// node_modules/.package-lock.json; otherwise the tree is made by hand, with
// neither (list_deps then reads every installed package.json, and
// active_plugins stamps every package's files).
func genHookProject(tb testing.TB, ws string, n int, installed bool) []protocol.PackageID {
	tb.Helper()
	files := map[string]string{}
	var decl, locked []string
	var ids []protocol.PackageID
	for i := range n {
		name := fmt.Sprintf("dep-%04d", i)
		version := fmt.Sprintf("1.0.%d", i)
		files["node_modules/"+name+"/package.json"] = fmt.Sprintf(`{"name":%q,"version":%q}`, name, version)
		if i%10 == 0 {
			files["node_modules/"+name+"/SYMPOSIUM.toml"] = "[defaults]\nskills = false\n"
		}
		decl = append(decl, fmt.Sprintf("%q:\"^1.0.0\"", name))
		locked = append(locked, fmt.Sprintf(`"node_modules/%s":{"version":%q,"resolved":"https://registry.npmjs.org/%s/-/%s-%s.tgz","integrity":"sha512-AAAA"}`,
			name, version, name, name, version))
		ids = append(ids, protocol.PackageID{PM: Name, Name: name, Version: version})
	}
	deps := `"dependencies":{` + strings.Join(decl, ",") + `}`
	files["package.json"] = `{"name":"app","version":"1.0.0",` + deps + `}`
	if installed {
		files["package-lock.json"] = `{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{` +
			`"":{"name":"app","version":"1.0.0",` + deps + `},` + strings.Join(locked, ",") + `}}`
		files["node_modules/.package-lock.json"] = `{"name":"app","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{` +
			strings.Join(locked, ",") + `}}`
	}
	writeFiles(tb, ws, files)
	return ids
}

// BenchmarkWholeHook measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) with 100, 400 and 2,000
// dependencies installed by npm (package-lock.json and npm's record of the
// install), one in ten with a plugin: cached (target ≤ 1.25× the null PM)
// and cold, interleaved with the null PM sent the same requests. load1 is
// the one-minute load average at the end.
func BenchmarkWholeHook(b *testing.B) {
	benchWholeHook(b, benchkit.WholeHookSizes, true)
}

// BenchmarkWholeHookHandMade is BenchmarkWholeHook at 2,000 dependencies
// on a tree made by hand, without a lockfile or an installer record: the
// cache then stamps every installed package's files (list_deps its
// package.json, active_plugins its directory and package.json).
func BenchmarkWholeHookHandMade(b *testing.B) {
	benchWholeHook(b, []int{2000}, false)
}

// benchWholeHook runs the whole-hook benchmark at each size.
func benchWholeHook(b *testing.B, sizes []int, installed bool) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-npm/cmd/symposium-pm-npm", b.TempDir())
	for _, n := range sizes {
		b.Run(fmt.Sprintf("deps=%d", n), func(b *testing.B) {
			ws := b.TempDir()
			deps := genHookProject(b, ws, n, installed)
			variants := benchkit.WholeHookVariants(b, bin, ws, nil, deps, n/10, 5)
			last := deps[len(deps)-1]
			variants = withNpmLs(b, variants, ws, toolRounds(n), last.Name+"@"+last.Version, "--all")
			benchkit.ReportRatios(b, benchkit.Interleave(b, 20, variants...), "npm-ls")
			benchkit.ReportLoad(b)
		})
	}
}

// BenchmarkWholeHookCachedInProcess measures list_deps and active_plugins
// answered from the persisted cache, without process start-up, at 2,000
// dependencies installed by npm.
func BenchmarkWholeHookCachedInProcess(b *testing.B) {
	ws := b.TempDir()
	deps := genHookProject(b, ws, 2000, true)
	p, _ := newPM(b, ws, nil)
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
