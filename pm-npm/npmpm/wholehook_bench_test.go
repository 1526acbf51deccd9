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
// list_deps reports them.
func genHookProject(tb testing.TB, ws string, n int) []protocol.PackageID {
	tb.Helper()
	files := map[string]string{}
	var decl []string
	var ids []protocol.PackageID
	for i := range n {
		name := fmt.Sprintf("dep-%04d", i)
		files["node_modules/"+name+"/package.json"] = fmt.Sprintf(`{"name":%q,"version":"1.0.%d"}`, name, i)
		if i%10 == 0 {
			files["node_modules/"+name+"/SYMPOSIUM.toml"] = "[defaults]\nskills = false\n"
		}
		decl = append(decl, fmt.Sprintf("%q:\"^1.0.0\"", name))
		ids = append(ids, protocol.PackageID{PM: Name, Name: name, Version: fmt.Sprintf("1.0.%d", i)})
	}
	files["package.json"] = `{"name":"app","version":"1.0.0","dependencies":{` + strings.Join(decl, ",") + `}}`
	writeFiles(tb, ws, files)
	return ids
}

// BenchmarkWholeHook measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) with 100, 400 and 2,000
// dependencies installed, one in ten with a plugin: cached (target ≤ 1.25×
// the null PM) and cold, interleaved with the null PM sent the same
// requests. load1 is the one-minute load average at the end.
func BenchmarkWholeHook(b *testing.B) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-npm/cmd/symposium-pm-npm", b.TempDir())
	for _, n := range benchkit.WholeHookSizes {
		b.Run(fmt.Sprintf("deps=%d", n), func(b *testing.B) {
			ws := b.TempDir()
			deps := genHookProject(b, ws, n)
			variants := benchkit.WholeHookVariants(b, bin, ws, nil, deps, n/10, 5)
			benchkit.ReportRatios(b, benchkit.Interleave(b, 20, variants...), "")
			benchkit.ReportLoad(b)
		})
	}
}

// BenchmarkWholeHookCachedInProcess measures list_deps and active_plugins
// answered from the persisted cache, without process start-up, at 2,000
// installed dependencies.
func BenchmarkWholeHookCachedInProcess(b *testing.B) {
	ws := b.TempDir()
	deps := genHookProject(b, ws, 2000)
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
