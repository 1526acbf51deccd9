package pypipm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
)

const (
	benchDirect = 320  // direct dependencies declared in pyproject.toml
	benchLocked = 1200 // packages in uv.lock (and in the virtualenv)
)

// bigWorkspace writes a project with benchDirect direct dependencies spread
// over [project], an extra and a dependency group, a uv.lock of benchLocked
// packages, and a virtualenv holding the same distributions (fabricated
// dist-info directories: what pip list reads).
func bigWorkspace(b *testing.B) (ws, site string) {
	b.Helper()
	ws = b.TempDir()
	var py, lock strings.Builder
	py.WriteString("[project]\nname = \"bench-app\"\nversion = \"1.0.0\"\ndependencies = [\n")
	for i := range benchDirect {
		switch i {
		case benchDirect - 40:
			py.WriteString("]\n\n[project.optional-dependencies]\nextra = [\n")
		case benchDirect - 20:
			py.WriteString("]\n\n[dependency-groups]\ndev = [\n")
		}
		fmt.Fprintf(&py, "  \"Pkg_%04d>=1.0 ; python_version >= '3.8'\",\n", i)
	}
	py.WriteString("]\n")
	lock.WriteString("version = 1\nrevision = 2\nrequires-python = \">=3.8\"\n\n")
	lock.WriteString("[[package]]\nname = \"bench-app\"\nversion = \"1.0.0\"\nsource = { editable = \".\" }\ndependencies = [\n")
	for i := range benchDirect {
		fmt.Fprintf(&lock, "    { name = \"pkg-%04d\" },\n", i)
	}
	lock.WriteString("]\n")
	site = filepath.Join(ws, ".venv", "lib", "python3.11", "site-packages")
	for i := range benchLocked {
		name := fmt.Sprintf("pkg-%04d", i)
		version := fmt.Sprintf("%d.%d.%d", 1+i%7, i%13, i%5)
		fmt.Fprintf(&lock, "\n[[package]]\nname = %q\nversion = %q\nsource = { registry = \"https://pypi.org/simple\" }\n", name, version)
		fmt.Fprintf(&lock, "sdist = { url = \"https://files.pythonhosted.org/packages/%s-%s.tar.gz\", hash = \"sha256:%064x\", size = %d }\n", name, version, i, 1000+i)
		fmt.Fprintf(&lock, "wheels = [\n    { url = \"https://files.pythonhosted.org/packages/%s-%s-py3-none-any.whl\", hash = \"sha256:%064x\", size = %d },\n]\n", strings.ReplaceAll(name, "-", "_"), version, i+1, 2000+i)
		if i+1 < benchLocked {
			fmt.Fprintf(&lock, "dependencies = [\n    { name = \"pkg-%04d\" },\n]\n", (i*7+1)%benchLocked)
		}
		di := filepath.Join(site, fmt.Sprintf("pkg_%04d-%s.dist-info", i, version))
		if err := os.MkdirAll(di, 0o755); err != nil {
			b.Fatal(err)
		}
		os.WriteFile(filepath.Join(di, "METADATA"), []byte(fmt.Sprintf("Metadata-Version: 2.1\nName: pkg_%04d\nVersion: %s\nSummary: package %d\n\nLong description.\n", i, version, i)), 0o644)
		os.WriteFile(filepath.Join(di, "INSTALLER"), []byte("pip\n"), 0o644)
		os.WriteFile(filepath.Join(di, "RECORD"), []byte(fmt.Sprintf("pkg_%04d/__init__.py,,\n", i)), 0o644)
		if i%10 == 0 { // every tenth distribution offers a plugin
			pkg := filepath.Join(site, fmt.Sprintf("pkg_%04d", i))
			os.MkdirAll(filepath.Join(pkg, "skills", "s"), 0o755)
			os.WriteFile(filepath.Join(pkg, "skills", "s", "SKILL.md"), []byte("---\nname: s\ndescription: d\n---\n"), 0o644)
			os.WriteFile(filepath.Join(pkg, "SYMPOSIUM.toml"), []byte("[[skills]]\nsource.path = \"guidance\"\n"), 0o644)
			os.WriteFile(filepath.Join(di, "entry_points.txt"), []byte(fmt.Sprintf("[symposium]\nplugin = pkg_%04d\n", i)), 0o644)
		}
	}
	os.WriteFile(filepath.Join(ws, ".venv", "pyvenv.cfg"), []byte("home = /usr/bin\nversion = 3.11.7\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "pyproject.toml"), []byte(py.String()), 0o644)
	os.WriteFile(filepath.Join(ws, "uv.lock"), []byte(lock.String()), 0o644)
	return ws, site
}

// BenchmarkHookPath measures spawn → initialize → list_deps → exit on a
// project with benchDirect direct dependencies and a benchLocked-package
// uv.lock: cold (no persisted cache: pyproject.toml and uv.lock parsed) and
// cached, beside `pip list --format=json` over a virtualenv of the same
// size, the SDK's null PM and a Go binary that only starts and exits.
func BenchmarkHookPath(b *testing.B) {
	ws, site := bigWorkspace(b)
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-pypi/cmd/symposium-pm-pypi", b.TempDir())
	cache := b.TempDir()
	deps := benchkit.HookPath(b, bin, nil, ws, cache)
	if len(deps) != benchDirect {
		b.Fatalf("list_deps returned %d deps, want %d", len(deps), benchDirect)
	}
	for _, d := range deps {
		if d.Version == "*" {
			b.Fatalf("unresolved %v", d)
		}
	}
	cacheFiles, _ := filepath.Glob(filepath.Join(cache, "pypi", "deps", "*.json"))
	if len(cacheFiles) != 1 {
		b.Fatalf("persisted cache: %v", cacheFiles)
	}
	b.Run("pypi-cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			os.Remove(cacheFiles[0])
			b.StartTimer()
			benchkit.HookPath(b, bin, nil, ws, cache)
		}
	})
	b.Run("pypi-cached", func(b *testing.B) {
		benchkit.HookPath(b, bin, nil, ws, cache)
		for b.Loop() {
			benchkit.HookPath(b, bin, nil, ws, cache)
		}
	})
	b.Run("in-process-cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			os.Remove(cacheFiles[0])
			b.StartTimer()
			if deps, err := newPM(b, ws, cache, nil).ListDeps(context.Background()); err != nil || len(deps) != benchDirect {
				b.Fatal(len(deps), err)
			}
		}
	})
	b.Run("in-process-cached", func(b *testing.B) {
		benchkit.HookPath(b, bin, nil, ws, cache)
		for b.Loop() {
			if deps, err := newPM(b, ws, cache, nil).ListDeps(context.Background()); err != nil || len(deps) != benchDirect {
				b.Fatal(len(deps), err)
			}
		}
	})
	b.Run("pip-list", func(b *testing.B) {
		py, err := exec.LookPath("python3")
		if err != nil {
			b.Skip("python3 not installed")
		}
		if err := exec.Command(py, "-m", "pip", "--version").Run(); err != nil {
			b.Skip("pip not installed")
		}
		out, err := exec.Command(py, "-m", "pip", "list", "--format=json", "--path", site).Output()
		if err != nil || strings.Count(string(out), `"name"`) != benchLocked {
			b.Fatalf("pip list: %v (%d entries)", err, strings.Count(string(out), `"name"`))
		}
		for b.Loop() {
			benchkit.Run(b, ws, py, "-m", "pip", "list", "--format=json", "--path", site, "--disable-pip-version-check")
		}
	})
	b.Run("nullpm", func(b *testing.B) {
		null := benchkit.NullPM(b)
		for b.Loop() {
			benchkit.HookPath(b, null, nil, ws, cache)
		}
	})
	b.Run("barego", func(b *testing.B) {
		bare := benchkit.BareGo(b)
		for b.Loop() {
			benchkit.Run(b, ws, bare)
		}
	})
}

// BenchmarkActivePlugins measures active_plugins for the benchDirect
// dependencies list_deps reports, read from the virtualenv (one in ten
// offers a plugin through an entry point and a SYMPOSIUM.toml), in process.
func BenchmarkActivePlugins(b *testing.B) {
	ws, _ := bigWorkspace(b)
	cache := b.TempDir()
	deps, err := newPM(b, ws, cache, nil).ListDeps(context.Background())
	if err != nil || len(deps) != benchDirect {
		b.Fatal(len(deps), err)
	}
	for b.Loop() {
		offers, err := newPM(b, ws, cache, nil).ActivePlugins(context.Background(), deps)
		if err != nil || len(offers) != benchDirect/10 {
			b.Fatal(len(offers), err)
		}
	}
}
