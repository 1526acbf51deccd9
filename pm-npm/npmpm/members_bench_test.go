package npmpm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// membersSizes are the workspace sizes BenchmarkMembers runs at.
var membersSizes = []int{1, 100, 1000}

// genMembersProject writes an npm workspace of members members, installed
// as npm 7 and later install one: the root package.json names
// "packages/*" as its workspaces; member packages/mNNNN declares the two
// dependencies every member shares (common-0 and common-1) and two of its
// own (dep-NNNNN); every dependency is hoisted into the root node_modules,
// where each member is a symbolic link to its directory; and
// package-lock.json and npm's record of the install,
// node_modules/.package-lock.json, list them as npm 11 writes them (the
// member's entry under its path without a "name" when the name is the
// directory's, a link entry under node_modules). common-0 and one own
// dependency in ten carry a SYMPOSIUM.toml. It returns the dependencies
// as list_deps reports them (each name and version once: 2 × members + 2)
// and how many of them active_plugins offers.
func genMembersProject(tb testing.TB, ws string, members int) (deps []protocol.PackageID, offers int) {
	tb.Helper()
	files := map[string]string{}
	var locked []string
	install := func(name, version string, plugin bool) {
		files["node_modules/"+name+"/package.json"] = fmt.Sprintf(`{"name":%q,"version":%q}`, name, version)
		if plugin {
			files["node_modules/"+name+"/SYMPOSIUM.toml"] = "[defaults]\nskills = false\n"
			offers++
		}
		locked = append(locked, fmt.Sprintf(`"node_modules/%s":{"version":%q,"resolved":"https://registry.npmjs.org/%s/-/%s-%s.tgz","integrity":"sha512-AAAA"}`,
			name, version, name, name, version))
		deps = append(deps, protocol.PackageID{PM: Name, Name: name, Version: version})
	}
	install("common-0", "4.17.21", true)
	install("common-1", "18.3.1", false)
	for m := range members {
		member := fmt.Sprintf("m%04d", m)
		decl := `"common-0":"^4.17.0","common-1":"^18.0.0"`
		for k := range 2 {
			i := 2*m + k
			name := fmt.Sprintf("dep-%05d", i)
			install(name, fmt.Sprintf("1.0.%d", i%100), i%10 == 0)
			decl += fmt.Sprintf(",%q:\"^1.0.0\"", name)
		}
		files["packages/"+member+"/package.json"] = fmt.Sprintf(`{"name":%q,"version":"1.0.0","dependencies":{%s}}`, member, decl)
		locked = append(locked,
			fmt.Sprintf(`"packages/%s":{"version":"1.0.0","dependencies":{%s}}`, member, decl),
			fmt.Sprintf(`"node_modules/%s":{"resolved":"packages/%s","link":true}`, member, member))
	}
	slices.Sort(locked) // npm writes the entries by path
	head := `{"name":"mono","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{`
	root := `"":{"name":"mono","version":"1.0.0","workspaces":["packages/*"]}`
	files["package.json"] = `{"name":"mono","version":"1.0.0","private":true,"workspaces":["packages/*"]}`
	files["package-lock.json"] = head + root + "," + strings.Join(locked, ",") + "}}"
	files["node_modules/.package-lock.json"] = head + strings.Join(locked, ",") + "}}"
	writeFiles(tb, ws, files)
	for m := range members {
		member := fmt.Sprintf("m%04d", m)
		if err := os.Symlink(filepath.Join("..", "packages", member), filepath.Join(ws, "node_modules", member)); err != nil {
			tb.Fatal(err)
		}
	}
	return deps, offers
}

// BenchmarkMembers measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) on npm workspaces of 1, 100
// and 1,000 members (see genMembersProject: 4, 202 and 2,002
// dependencies installed, two shared by every member): cached and cold
// (in the first 5 rounds), interleaved with the null PM sent the same
// requests, a bare Go binary, and `npm ls --all --package-lock-only`
// (offline, in the first rounds only: see toolRounds). The growth curve
// by members the cold hook must stay linear on (deps plus members). Each
// PM run checks the number of dependencies listed and offers made; each
// npm run, that its output names the last member's last dependency.
// load1 is the one-minute load average at the end.
func BenchmarkMembers(b *testing.B) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-npm/cmd/symposium-pm-npm", b.TempDir())
	bare := benchkit.BareGo(b)
	for _, n := range membersSizes {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			ws := b.TempDir()
			deps, offers := genMembersProject(b, ws, n)
			variants := append([]benchkit.Variant{{Name: "barego", Run: func() benchkit.Hook {
				return benchkit.RunCmd(b, exec.Command(bare), ws)
			}}}, benchkit.WholeHookVariants(b, bin, ws, nil, deps, offers, 5)...)
			last := deps[len(deps)-1]
			variants = withNpmLs(b, variants, ws, toolRounds(n), last.Name+"@"+last.Version, "--all", "--package-lock-only")
			benchkit.ReportRatios(b, benchkit.Interleave(b, 20, variants...), "npm-ls")
			b.ReportMetric(float64(len(deps)), "deps")
			benchkit.ReportLoad(b)
		})
	}
}
