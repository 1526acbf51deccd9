package pypipm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
)

// membersSizes are the numbers of workspace members BenchmarkMembers runs
// at.
var membersSizes = []int{1, 100, 1000}

// membersPool is how many registry dependencies a members workspace
// declares and installs, whatever its number of members, so that the
// curve shows what members cost.
const membersPool = 100

// genMembersWorkspace writes a uv workspace of n members under packages/,
// as uv lays one out and locks it, and returns the number of
// distributions installed in its .venv:
//
//   - the root project "app" declares the membersPool registry
//     dependencies (dep0000 …, installed by genHookVenv, one in ten with a
//     plugin) and [tool.uv.workspace] members = ["packages/*"];
//   - member i (member-NNNN, a src layout) declares three of them and,
//     from the second on, the member before it through
//     [tool.uv.sources] { workspace = true };
//   - uv.lock (version 1, revision 2) names the root and every member in
//     [manifest], locks them as editable packages with their
//     dependencies and [package.metadata] requires-dist, and the
//     dependencies as registry packages with an sdist and a wheel, all
//     sorted by name as uv writes them;
//   - .venv holds the root and every member as uv installs a workspace
//     (uv sync --all-packages): editable, a dist-info with INSTALLER,
//     REQUESTED, direct_url.json and a RECORD naming a .pth file that
//     puts the project's src on the path.
//
// Members are not dependencies: list_deps answers the membersPool
// dependencies at every size.
func genMembersWorkspace(tb testing.TB, ws string, n int) int {
	tb.Helper()
	genHookVenv(tb, ws, membersPool)
	site := filepath.Join(ws, ".venv", "lib", "python3.12", "site-packages")
	pool := func(i int) string { return fmt.Sprintf("dep%04d", i%membersPool) }
	member := func(i int) string { return fmt.Sprintf("member-%04d", i) }

	files := map[string]string{}
	var root, lock strings.Builder
	root.WriteString("[project]\nname = \"app\"\nversion = \"0.1.0\"\nrequires-python = \">=3.12\"\ndependencies = [\n")
	for i := range membersPool {
		fmt.Fprintf(&root, "    %q,\n", pool(i)+">=1.0")
	}
	root.WriteString("]\n\n[tool.uv.workspace]\nmembers = [\"packages/*\"]\n\n[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n")
	files["pyproject.toml"] = root.String()

	// lockPkg writes one package's table; deps are [name, editable path]
	// pairs (path "" for a registry package).
	type dep struct{ name, editable string }
	lockPkg := func(name, version, source string, deps []dep) {
		fmt.Fprintf(&lock, "\n[[package]]\nname = %q\nversion = %q\nsource = %s\n", name, version, source)
		if len(deps) > 0 {
			lock.WriteString("dependencies = [\n")
			for _, d := range deps {
				fmt.Fprintf(&lock, "    { name = %q },\n", d.name)
			}
			lock.WriteString("]\n")
		}
	}
	requiresDist := func(deps []dep) {
		lock.WriteString("\n[package.metadata]\nrequires-dist = [\n")
		for _, d := range deps {
			if d.editable != "" {
				fmt.Fprintf(&lock, "    { name = %q, editable = %q },\n", d.name, d.editable)
			} else {
				fmt.Fprintf(&lock, "    { name = %q, specifier = \">=1.0\" },\n", d.name)
			}
		}
		lock.WriteString("]\n")
	}
	installEditable := func(name, dir string) {
		mod := strings.ReplaceAll(name, "-", "_")
		di := mod + "-0.1.0.dist-info/"
		files[".venv-site/"+di+"METADATA"] = "Metadata-Version: 2.4\nName: " + name + "\nVersion: 0.1.0\nRequires-Python: >=3.12\n\n"
		files[".venv-site/"+di+"INSTALLER"] = "uv\n"
		files[".venv-site/"+di+"REQUESTED"] = ""
		files[".venv-site/"+di+"direct_url.json"] = fmt.Sprintf(`{"url":"file://%s","dir_info":{"editable":true}}`, filepath.ToSlash(dir))
		files[".venv-site/"+di+"RECORD"] = "_" + mod + ".pth,,\n" + di + "METADATA,,\n" + di + "INSTALLER,,\n" + di + "REQUESTED,,\n" + di + "direct_url.json,,\n" + di + "RECORD,,\n"
		files[".venv-site/_"+mod+".pth"] = filepath.Join(dir, "src") + "\n"
	}

	names := []string{"app"}
	for i := range n {
		names = append(names, member(i))
	}
	lock.WriteString("version = 1\nrevision = 2\nrequires-python = \">=3.12\"\n\n[manifest]\nmembers = [\n")
	for _, name := range names {
		fmt.Fprintf(&lock, "    %q,\n", name)
	}
	lock.WriteString("]\n")

	var rootDeps []dep
	for i := range membersPool {
		rootDeps = append(rootDeps, dep{name: pool(i)})
	}
	lockPkg("app", "0.1.0", `{ editable = "." }`, rootDeps)
	requiresDist(rootDeps)
	installEditable("app", ws)
	for i := range membersPool {
		name := pool(i)
		fmt.Fprintf(&lock, "\n[[package]]\nname = %q\nversion = \"1.0\"\nsource = { registry = \"https://pypi.org/simple\" }\n", name)
		fmt.Fprintf(&lock, "sdist = { url = \"https://files.pythonhosted.org/packages/ab/cd/%s-1.0.tar.gz\", hash = \"sha256:%064x\", size = %d, upload-time = \"2024-01-01T00:00:00Z\" }\n", name, i, 10000+i)
		fmt.Fprintf(&lock, "wheels = [\n    { url = \"https://files.pythonhosted.org/packages/ef/01/%s-1.0-py3-none-any.whl\", hash = \"sha256:%064x\", size = %d, upload-time = \"2024-01-01T00:00:00Z\" },\n]\n", name, i+1, 20000+i)
	}
	for i := range n {
		name, rel := member(i), "packages/"+member(i)
		deps := []dep{{name: pool(3 * i)}, {name: pool(3*i + 1)}, {name: pool(3*i + 2)}}
		var py strings.Builder
		fmt.Fprintf(&py, "[project]\nname = %q\nversion = \"0.1.0\"\nrequires-python = \">=3.12\"\ndependencies = [\n", name)
		for _, d := range deps {
			fmt.Fprintf(&py, "    %q,\n", d.name+">=1.0")
		}
		if i > 0 {
			prev := member(i - 1)
			deps = append(deps, dep{name: prev, editable: "packages/" + prev})
			fmt.Fprintf(&py, "    %q,\n]\n\n[tool.uv.sources]\n%s = { workspace = true }\n", prev, prev)
		} else {
			py.WriteString("]\n")
		}
		py.WriteString("\n[build-system]\nrequires = [\"hatchling\"]\nbuild-backend = \"hatchling.build\"\n")
		files[rel+"/pyproject.toml"] = py.String()
		files[rel+"/src/"+strings.ReplaceAll(name, "-", "_")+"/__init__.py"] = ""
		slices.SortFunc(deps, func(a, b dep) int { return strings.Compare(a.name, b.name) })
		lockPkg(name, "0.1.0", fmt.Sprintf("{ editable = %q }", rel), deps)
		requiresDist(deps)
		installEditable(name, filepath.Join(ws, filepath.FromSlash(rel)))
	}
	files["uv.lock"] = lock.String()

	for name, data := range files {
		p := filepath.Join(ws, filepath.FromSlash(name))
		if rest, ok := strings.CutPrefix(name, ".venv-site/"); ok {
			p = filepath.Join(site, filepath.FromSlash(rest))
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return membersPool + 1 + n
}

// BenchmarkMembers measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) on a uv workspace of 1, 100
// and 1,000 members (genMembersWorkspace: each member declares three of
// the same 100 registry dependencies and the member before it; the
// virtualenv holds the dependencies, one in ten with a plugin, and every
// member as an editable install): cached and cold (fresh cache, first 5
// rounds), interleaved with the SDK's null PM sent the same requests, a
// Go binary that only starts and exits, and, where python3 has pip, `pip
// list --format=json --path <site-packages>` offline over the same
// virtualenv (pipListCmd; first 5 rounds, 3 at 1,000), checked to list
// every installed distribution. Every run of the PM is checked to list the
// 100 dependencies and make their 10 offers; list_deps is checked once to
// answer each at its locked version. uv (`uv tree --frozen`, `uv pip
// list`) is not installed on the machine these figures come from, so the
// lockfile itself is not read by any tool here. load1 is the one-minute
// load average at the end.
func BenchmarkMembers(b *testing.B) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-pypi/cmd/symposium-pm-pypi", b.TempDir())
	py, havePip := benchPython(b)
	bare := benchkit.BareGo(b)
	for _, n := range membersSizes {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) {
			ws := b.TempDir()
			installed := genMembersWorkspace(b, ws, n)
			site := filepath.Join(ws, ".venv", "lib", "python3.12", "site-packages")
			var want []string
			for i := range membersPool {
				want = append(want, fmt.Sprintf("dep%04d 1.0", i))
			}
			deps := benchkit.HookPath(b, bin, nil, ws, b.TempDir())
			var got []string
			for _, d := range deps {
				got = append(got, d.Name+" "+d.Version)
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				b.Fatalf("list_deps on %d members answered %d deps, want the %d locked ones: %v", n, len(got), len(want), got)
			}
			variants := []benchkit.Variant{{Name: "barego", Run: func() benchkit.Hook { return benchkit.RunCmd(b, exec.Command(bare), ws) }}}
			variants = append(variants, benchkit.WholeHookVariants(b, bin, ws, testEnv(b, nil), deps, membersPool/10, 5)...)
			if havePip {
				variants = append(variants, pipListVariant(b, py, ws, site, installed, pipRounds(installed)))
			}
			benchkit.ReportRatios(b, benchkit.Interleave(b, 20, variants...), "pip-list")
			b.ReportMetric(float64(n), "members")
			b.ReportMetric(membersPool, "direct-deps")
			benchkit.ReportLoad(b)
		})
	}
}
