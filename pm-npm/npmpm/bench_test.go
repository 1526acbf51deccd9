package npmpm

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

const (
	benchMembers       = 50
	benchDepsPerMember = 8 // 400 direct dependencies in all
	benchSubsPerDep    = 3 // 1,200 transitive packages
)

// genBenchProject writes a workspace of benchMembers members whose
// package-lock.json (v3, as npm 9+ writes it) locks 400 direct and 1,200
// transitive packages, and returns the number of locked packages.
func genBenchProject(tb testing.TB, dir string) int {
	tb.Helper()
	packages := map[string]any{}
	rootDeps := map[string]string{}
	locked := 0
	for m := 0; m < benchMembers; m++ {
		name := fmt.Sprintf("member-%02d", m)
		rel := "packages/" + name
		deps := map[string]string{}
		for d := 0; d < benchDepsPerMember; d++ {
			i := m*benchDepsPerMember + d
			dep := fmt.Sprintf("dep-%03d", i)
			deps[dep] = fmt.Sprintf("^1.0.%d", i)
			subs := map[string]string{}
			for s := 0; s < benchSubsPerDep; s++ {
				sub := fmt.Sprintf("sub-%04d", i*benchSubsPerDep+s)
				subs[sub] = "^2.0.0"
				packages["node_modules/"+sub] = map[string]any{
					"version":   "2.0.1",
					"resolved":  "https://registry.npmjs.org/" + sub + "/-/" + sub + "-2.0.1.tgz",
					"integrity": "sha512-AAAA",
				}
				locked++
			}
			packages["node_modules/"+dep] = map[string]any{
				"version":      fmt.Sprintf("1.0.%d", i),
				"resolved":     fmt.Sprintf("https://registry.npmjs.org/%s/-/%s-1.0.%d.tgz", dep, dep, i),
				"integrity":    "sha512-BBBB",
				"dependencies": subs,
			}
			locked++
		}
		pkg := map[string]any{"name": name, "version": "1.0.0", "dependencies": deps}
		writeJSON(tb, filepath.Join(dir, rel, "package.json"), pkg)
		packages[rel] = map[string]any{"name": name, "version": "1.0.0", "dependencies": deps}
		packages["node_modules/"+name] = map[string]any{"resolved": rel, "link": true}
		rootDeps[name] = "1.0.0"
	}
	root := map[string]any{"name": "bench-root", "version": "1.0.0", "workspaces": []string{"packages/*"}}
	writeJSON(tb, filepath.Join(dir, "package.json"), root)
	packages[""] = root
	writeJSON(tb, filepath.Join(dir, "package-lock.json"), map[string]any{
		"name": "bench-root", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": packages,
	})
	return locked
}

func writeJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
}

// TestBenchProject checks the generated project: list_deps reports its 400
// direct dependencies. (BenchmarkHookPath runs npm ls on it, which fails
// when npm rejects the lockfile.)
func TestBenchProject(t *testing.T) {
	dir := t.TempDir()
	if n := genBenchProject(t, dir); n < 1500 {
		t.Fatalf("only %d locked packages", n)
	}
	p, _ := newPM(t, dir, nil)
	deps, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(deps) != benchMembers*benchDepsPerMember {
		t.Errorf("%d direct deps, want %d", len(deps), benchMembers*benchDepsPerMember)
	}
}

// BenchmarkHookPath measures spawn → initialize → list_deps → exit on a
// 50-member workspace with 400 direct and 1,600 locked packages, cold (empty
// cache) and with the persisted cache, beside `npm ls --package-lock-only
// --depth=0 --json`, the SDK's null PM and a bare Go binary.
//
// The variants are interleaved (benchkit.Interleave: 50 rounds per
// iteration, npm ls in the first 3) so that a shared machine's load affects
// them alike; the report gives their medians (-ms wall time, spawn to exit;
// -cpu-ms CPU time) and the ratios the targets are stated in:
// cached/nullpm (target ≤ 1.25) and npm-ls/cached (target ≥ 40).
func BenchmarkHookPath(b *testing.B) {
	const rounds, npmRounds = 50, 3
	ws := b.TempDir()
	locked := genBenchProject(b, ws)
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-npm/cmd/symposium-pm-npm", b.TempDir())
	variants := benchkit.HookVariants(b, bin, ws, 400)
	if npm, err := exec.LookPath("npm"); err == nil {
		variants = append(variants, benchkit.Variant{Name: "npm-ls", Rounds: npmRounds, Run: func() benchkit.Hook {
			return benchkit.RunCmd(b, exec.Command(npm, "ls", "--package-lock-only", "--depth=0", "--json"), ws)
		}})
	} else {
		b.Log("npm is not installed: measuring without npm ls")
	}
	benchkit.ReportRatios(b, benchkit.Interleave(b, rounds, variants...), "npm-ls")
	b.ReportMetric(benchMembers, "members")
	b.ReportMetric(benchMembers*benchDepsPerMember, "direct-deps")
	b.ReportMetric(float64(locked), "locked-pkgs")
	benchkit.ReportLoad(b)
}

// BenchmarkListDepsInProcess measures the cold list_deps computation
// without process start-up.
func BenchmarkListDepsInProcess(b *testing.B) {
	ws := b.TempDir()
	genBenchProject(b, ws)
	p, _ := newPM(b, ws, nil)
	p.cacheRoot = ""
	for b.Loop() {
		if _, err := p.ListDeps(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// genInstalled writes n installed packages under ws/node_modules: a quarter
// with skills, a quarter with a "symposium" object, a quarter with a
// SYMPOSIUM.toml, the rest plain.
func genInstalled(tb testing.TB, ws string, n int) []protocol.PackageID {
	tb.Helper()
	files := map[string]string{}
	var ids []protocol.PackageID
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("pkg-%03d", i)
		dir := "node_modules/" + name + "/"
		pj := fmt.Sprintf(`{"name":%q,"version":"1.0.%d"`, name, i)
		switch i % 4 {
		case 0:
			files[dir+"skills/s/SKILL.md"] = "---\nname: s\ndescription: d\n---\n"
		case 1:
			pj += `,"symposium":{"skills":[{"source":{"path":"docs"}}]}`
		case 2:
			files[dir+"SYMPOSIUM.toml"] = "[defaults]\nskills = false\n"
		}
		files[dir+"package.json"] = pj + "}"
		ids = append(ids, protocol.PackageID{PM: Name, Name: name, Version: fmt.Sprintf("1.0.%d", i)})
	}
	writeFiles(tb, ws, files)
	return ids
}

// BenchmarkActivePlugins measures active_plugins over 400 installed deps,
// without the persisted cache.
func BenchmarkActivePlugins(b *testing.B) {
	ws := b.TempDir()
	deps := genInstalled(b, ws, 400)
	p, _ := newPM(b, ws, nil)
	p.cacheRoot = ""
	for b.Loop() {
		offers, err := p.ActivePlugins(context.Background(), deps)
		if err != nil || len(offers) != 300 {
			b.Fatalf("%d offers, %v", len(offers), err)
		}
	}
}

// BenchmarkFetchNone measures fetch with update "none" of an installed
// package by range.
func BenchmarkFetchNone(b *testing.B) {
	ws := b.TempDir()
	genInstalled(b, ws, 400)
	p, _ := newPM(b, ws, nil)
	for b.Loop() {
		if _, err := p.Fetch(context.Background(), npmID("pkg-123", "^1.0.0"), protocol.UpdateNone); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkListDepsCachedInProcess measures a list_deps cache hit without
// process start-up.
func BenchmarkListDepsCachedInProcess(b *testing.B) {
	ws := b.TempDir()
	genBenchProject(b, ws)
	p, _ := newPM(b, ws, nil)
	if _, err := p.ListDeps(context.Background()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := p.ListDeps(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
