package pypipm

import (
	"context"
	"fmt"
	"os"
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
// uv.lock: cold (empty cache: pyproject.toml and uv.lock parsed) and with the
// persisted cache, beside `pip list --format=json` over a virtualenv of the
// same size (pipListCmd: offline, run by the interpreter itself, not a
// version manager's shim), the SDK's null PM and a Go binary that only
// starts and exits.
//
// The variants are interleaved (benchkit.Interleave: 50 rounds per
// iteration, pip list in the first 3) so that a shared machine's load
// affects them alike; the report gives their medians (-ms wall time, spawn
// to exit; -cpu-ms CPU time) and the ratios the targets are stated in:
// cached/nullpm (target ≤ 1.25) and pip-list/cached (target ≥ 20).
func BenchmarkHookPath(b *testing.B) {
	const rounds, pipRounds = 50, 3
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
	if entries, _ := filepath.Glob(filepath.Join(cache, Name, "deps", "*.cache")); len(entries) != 1 {
		b.Fatalf("persisted cache: %v", entries)
	}
	variants := benchkit.HookVariants(b, bin, ws, benchDirect)
	if py, ok := benchPython(b); ok {
		variants = append(variants, pipListVariant(b, py, ws, site, benchLocked, pipRounds))
	}
	benchkit.ReportRatios(b, benchkit.Interleave(b, rounds, variants...), "pip-list")
	b.ReportMetric(benchDirect, "direct-deps")
	b.ReportMetric(benchLocked, "locked-pkgs")
	benchkit.ReportLoad(b)
}

// BenchmarkListDepsInProcess measures the list_deps computation without
// process start-up: cold (the persisted entry removed before each run) and
// from the persisted cache.
func BenchmarkListDepsInProcess(b *testing.B) {
	ws, _ := bigWorkspace(b)
	cache := b.TempDir()
	list := func(b *testing.B) {
		if deps, err := newPM(b, ws, cache, nil).ListDeps(context.Background()); err != nil || len(deps) != benchDirect {
			b.Fatal(len(deps), err)
		}
	}
	list(b)
	entries, _ := filepath.Glob(filepath.Join(cache, Name, "deps", "*.cache"))
	if len(entries) != 1 {
		b.Fatalf("persisted cache: %v", entries)
	}
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			os.Remove(entries[0])
			b.StartTimer()
			list(b)
		}
	})
	b.Run("cached", func(b *testing.B) {
		list(b)
		for b.Loop() {
			list(b)
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
