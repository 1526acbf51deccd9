package pypipm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// genHookVenv writes a project declaring n dependencies, each installed in
// .venv (METADATA, RECORD, a package directory), one in ten with a
// SYMPOSIUM.toml in its package, and returns them as list_deps reports
// them. With a RECORD, as installers write it, each distribution is
// installer-owned (owned.go): a cached answer is checked through the stamp
// of site-packages and the plugin roots, not file by file.
func genHookVenv(tb testing.TB, ws string, n int) []protocol.PackageID {
	tb.Helper()
	site := filepath.Join(ws, ".venv", "lib", "python3.12", "site-packages")
	files := map[string]string{".venv/pyvenv.cfg": "version = 3.12.1\n"}
	var decl []string
	var ids []protocol.PackageID
	for i := range n {
		name := fmt.Sprintf("dep%04d", i)
		di := name + "-1.0.dist-info/"
		files[di+"METADATA"] = "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n\n"
		files[di+"RECORD"] = name + "/__init__.py,,\n" + di + "METADATA,,\n"
		files[name+"/__init__.py"] = ""
		if i%10 == 0 {
			files[name+"/SYMPOSIUM.toml"] = "[defaults]\nskills = false\n"
		}
		decl = append(decl, fmt.Sprintf("%q", name))
		ids = append(ids, pkgID(name, "1.0"))
	}
	for name, data := range files {
		base := site
		if strings.HasPrefix(name, ".venv/") {
			base = ws
		}
		p := filepath.Join(base, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	pyproject := "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [" + strings.Join(decl, ", ") + "]\n"
	if err := os.WriteFile(filepath.Join(ws, "pyproject.toml"), []byte(pyproject), 0o644); err != nil {
		tb.Fatal(err)
	}
	return ids
}

// BenchmarkWholeHook measures the whole hook (spawn, initialize, list_deps,
// active_plugins for list_deps' answer, exit) with 100, 400 and 2,000
// dependencies installed in the virtualenv, one in ten with a plugin:
// cached (target ≤ 1.25× the null PM) and cold, interleaved with the null
// PM sent the same requests and, where python3 has pip, with the ecosystem
// tool on the same virtualenv: `pip list --format=json --path
// <site-packages>` offline (pipListCmd), checked to list the n
// distributions, in the first 5 rounds (3 at 2,000). uv (`uv pip list`)
// and Poetry are not installed on the machine these figures come from; a
// benchmark cannot fetch them. load1 is the one-minute load average at the
// end.
func BenchmarkWholeHook(b *testing.B) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-pypi/cmd/symposium-pm-pypi", b.TempDir())
	py, havePip := benchPython(b)
	for _, n := range benchkit.WholeHookSizes {
		b.Run(fmt.Sprintf("deps=%d", n), func(b *testing.B) {
			ws := b.TempDir()
			deps := genHookVenv(b, ws, n)
			env := testEnv(b, nil)
			variants := benchkit.WholeHookVariants(b, bin, ws, env, deps, n/10, 5)
			if havePip {
				site := filepath.Join(ws, ".venv", "lib", "python3.12", "site-packages")
				variants = append(variants, pipListVariant(b, py, ws, site, n, pipRounds(n)))
			}
			benchkit.ReportRatios(b, benchkit.Interleave(b, 20, variants...), "pip-list")
			benchkit.ReportLoad(b)
		})
	}
}

// pipRounds is how many rounds of a benchmark run pip list over n
// distributions: 5, or 3 from 1,000 on, where one run takes seconds.
func pipRounds(n int) int {
	if n >= 1000 {
		return 3
	}
	return 5
}
