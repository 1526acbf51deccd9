package pypipm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
)

// coldLockSizes are the numbers of locked packages the cold-lock
// benchmarks run at; 50,000 is the size the peak-memory target is stated
// at.
var coldLockSizes = []int{1000, 10000, 50000}

// genUVLockProject writes a project declaring n/50 dependencies in
// pyproject.toml and a uv.lock of n packages shaped as uv writes them
// (source, sdist, wheels, dependencies), and returns the number of
// declared dependencies. No virtualenv: list_deps reads the two files.
func genUVLockProject(tb testing.TB, ws string, n int) int {
	tb.Helper()
	direct := max(n/50, 1)
	var py, lock strings.Builder
	py.WriteString("[project]\nname = \"app\"\nversion = \"1.0.0\"\ndependencies = [\n")
	lock.WriteString("version = 1\nrevision = 2\nrequires-python = \">=3.9\"\n\n[[package]]\nname = \"app\"\nversion = \"1.0.0\"\nsource = { editable = \".\" }\ndependencies = [\n")
	for i := range direct {
		fmt.Fprintf(&py, "  \"pkg-%05d>=1.0\",\n", i)
		fmt.Fprintf(&lock, "    { name = \"pkg-%05d\" },\n", i)
	}
	py.WriteString("]\n")
	lock.WriteString("]\n")
	for i := range n {
		name := fmt.Sprintf("pkg-%05d", i)
		version := fmt.Sprintf("1.%d.%d", i%13, i%7)
		fmt.Fprintf(&lock, "\n[[package]]\nname = %q\nversion = %q\nsource = { registry = \"https://pypi.org/simple\" }\n", name, version)
		lock.WriteString("dependencies = [\n")
		for k := 1; k <= 3; k++ {
			fmt.Fprintf(&lock, "    { name = \"pkg-%05d\" },\n", (i*7+k)%n)
		}
		lock.WriteString("]\n")
		fmt.Fprintf(&lock, "sdist = { url = \"https://files.pythonhosted.org/packages/ab/cd/%s-%s.tar.gz\", hash = \"sha256:%064x\", size = %d, upload-time = \"2024-01-01T00:00:00Z\" }\n", name, version, i, 10000+i)
		fmt.Fprintf(&lock, "wheels = [\n    { url = \"https://files.pythonhosted.org/packages/ef/01/%s-%s-py3-none-any.whl\", hash = \"sha256:%064x\", size = %d, upload-time = \"2024-01-01T00:00:00Z\" },\n]\n", strings.ReplaceAll(name, "-", "_"), version, i+1, 20000+i)
	}
	writeBenchFiles(tb, ws, map[string]string{"pyproject.toml": py.String(), "uv.lock": lock.String()})
	return direct
}

// genPoetryLockProject is genUVLockProject for Poetry: the dependencies in
// [tool.poetry.dependencies], a poetry.lock (lock-version 2.1) of n
// packages with their files and dependency tables.
func genPoetryLockProject(tb testing.TB, ws string, n int) int {
	tb.Helper()
	direct := max(n/50, 1)
	var py, lock strings.Builder
	py.WriteString("[tool.poetry]\nname = \"app\"\nversion = \"1.0.0\"\n\n[tool.poetry.dependencies]\npython = \"^3.9\"\n")
	for i := range direct {
		fmt.Fprintf(&py, "pkg-%05d = \"^1.0\"\n", i)
	}
	for i := range n {
		name := fmt.Sprintf("pkg-%05d", i)
		version := fmt.Sprintf("1.%d.%d", i%13, i%7)
		fmt.Fprintf(&lock, "[[package]]\nname = %q\nversion = %q\ndescription = \"Package number %d.\"\noptional = false\npython-versions = \">=3.8\"\ngroups = [\"main\"]\n", name, version, i)
		fmt.Fprintf(&lock, "files = [\n    {file = \"%s-%s-py3-none-any.whl\", hash = \"sha256:%064x\"},\n    {file = \"%s-%s.tar.gz\", hash = \"sha256:%064x\"},\n]\n\n", strings.ReplaceAll(name, "-", "_"), version, i, name, version, i+1)
		lock.WriteString("[package.dependencies]\n")
		for k := 1; k <= 3; k++ {
			fmt.Fprintf(&lock, "pkg-%05d = \">=1.0\"\n", (i*7+k)%n)
		}
		lock.WriteString("\n")
	}
	lock.WriteString("[metadata]\nlock-version = \"2.1\"\npython-versions = \"^3.9\"\ncontent-hash = \"0000\"\n")
	writeBenchFiles(tb, ws, map[string]string{"pyproject.toml": py.String(), "poetry.lock": lock.String()})
	return direct
}

func writeBenchFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// benchColdLock runs the hook path (spawn, initialize, list_deps, exit) on
// projects gen writes at each of coldLockSizes: cold (an empty cache
// directory: the lockfile is parsed) and cached, interleaved with the null
// PM and a bare Go binary, with each variant's peak resident memory
// (-peak-RSS-KiB; target ≤ 64 MiB at 50,000 locked packages). load1 is
// the one-minute load average at the end.
//
// No ecosystem tool runs beside it: these projects have a lockfile and no
// virtualenv, and the tools that read a lockfile offline (`uv tree
// --frozen`, `poetry show`) are not installed on the machine these
// figures come from, while pip reads only installed distributions (see
// BenchmarkWholeHook and BenchmarkMembers for pip list).
func benchColdLock(b *testing.B, gen func(testing.TB, string, int) int) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-pypi/cmd/symposium-pm-pypi", b.TempDir())
	for _, n := range coldLockSizes {
		b.Run(fmt.Sprintf("locked=%d", n), func(b *testing.B) {
			ws := b.TempDir()
			direct := gen(b, ws, n)
			benchkit.ReportRatios(b, benchkit.Interleave(b, 10, benchkit.HookVariants(b, bin, ws, direct)...), "")
			benchkit.ReportLoad(b)
		})
	}
}

// BenchmarkColdLockUV measures the hook path on a uv.lock of 1,000 to
// 50,000 packages (see benchColdLock).
func BenchmarkColdLockUV(b *testing.B) { benchColdLock(b, genUVLockProject) }

// BenchmarkColdLockPoetry measures the hook path on a poetry.lock of 1,000
// to 50,000 packages (see benchColdLock).
func BenchmarkColdLockPoetry(b *testing.B) { benchColdLock(b, genPoetryLockProject) }
