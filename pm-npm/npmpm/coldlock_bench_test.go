package npmpm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
)

// coldLockSizes are the numbers of locked packages BenchmarkColdLock runs
// at: 20,000 and 50,000 are the sizes the cold-path targets are stated at.
var coldLockSizes = []int{1000, 10000, 20000, 50000}

// coldLockToolMax is the largest size BenchmarkColdLock runs npm ls at.
// npm ls --package-lock-only --depth=0 grows faster than the lockfile: on
// 2026-12-03 on the 2-core machine it took 2.8 s at 1,000 locked packages,
// 26 s at 10,000 and 136 s (81 s of CPU, load 8.6) at 20,000; at 50,000 it
// had not finished in the remaining 5 minutes.
const coldLockToolMax = 10000

// genLockedProject writes a project whose package-lock.json (v3, entries
// shaped as npm writes them: resolved, integrity, license, engines,
// dependencies, dev) locks n packages, n/50 of them declared in
// package.json, and returns how many list_deps reports. Every package but
// the last three depends on three others. Nothing is installed: list_deps
// reads the two files.
func genLockedProject(tb testing.TB, ws string, n int) int {
	tb.Helper()
	if n < 4 {
		tb.Fatalf("genLockedProject: %d locked packages, want at least 4", n)
	}
	direct := max(n/50, 1)
	var pj, lock strings.Builder
	pj.WriteString(`{"name":"app","version":"1.0.0","dependencies":{`)
	lock.WriteString("{\n  \"name\": \"app\",\n  \"version\": \"1.0.0\",\n  \"lockfileVersion\": 3,\n  \"requires\": true,\n  \"packages\": {\n")
	lock.WriteString("    \"\": {\n      \"name\": \"app\",\n      \"version\": \"1.0.0\",\n      \"dependencies\": {\n")
	for i := range direct {
		sep := ","
		if i == direct-1 {
			sep = ""
		}
		fmt.Fprintf(&pj, "%q:\"^1.0.0\"%s", fmt.Sprintf("pkg-%05d", i), sep)
		fmt.Fprintf(&lock, "        \"pkg-%05d\": \"^1.0.0\"%s\n", i, sep)
	}
	pj.WriteString("}}\n")
	lock.WriteString("      }\n    }")
	// The dependencies form a tree a few levels deep, as real ones do:
	// package i depends on 3i+1 … 3i+3, and where those are past the inner
	// packages, on the last three, which depend on nothing. (A graph with
	// chains thousands deep makes npm ls fail: "Maximum call stack size
	// exceeded".)
	inner := n - 3
	for i := range n {
		name := fmt.Sprintf("pkg-%05d", i)
		fmt.Fprintf(&lock, ",\n    \"node_modules/%s\": {\n      \"version\": \"1.0.%d\",\n", name, i%100)
		fmt.Fprintf(&lock, "      \"resolved\": \"https://registry.npmjs.org/%s/-/%s-1.0.%d.tgz\",\n", name, name, i%100)
		lock.WriteString("      \"integrity\": \"sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\",\n")
		if i%3 == 0 && i >= direct {
			lock.WriteString("      \"dev\": true,\n")
		}
		lock.WriteString("      \"license\": \"MIT\",\n")
		if i < inner {
			lock.WriteString("      \"dependencies\": {\n")
			for k := 1; k <= 3; k++ {
				sep := ","
				if k == 3 {
					sep = ""
				}
				dep := 3*i + k
				if dep >= inner {
					dep = inner + k - 1
				}
				fmt.Fprintf(&lock, "        \"pkg-%05d\": \"^1.0.0\"%s\n", dep, sep)
			}
			lock.WriteString("      },\n")
		}
		lock.WriteString("      \"engines\": {\n        \"node\": \">=14\"\n      }\n    }")
	}
	lock.WriteString("\n  }\n}\n")
	for name, data := range map[string]string{"package.json": pj.String(), "package-lock.json": lock.String()} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(data), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return direct
}

// BenchmarkColdLock measures the hook path (spawn, initialize, list_deps,
// exit) on a package-lock.json of 1,000 to 50,000 locked packages: cold
// (an empty cache directory: the lockfile is parsed; target ≤ 150 ms at
// 20,000) and cached, interleaved with the null PM and a bare Go binary,
// with each variant's peak resident memory (-peak-RSS-KiB; target ≤ 64 MiB
// at 50,000). Beside them, offline, npm ls --package-lock-only --depth=0
// (the "npm-ls" variant, in the first rounds only: see toolRounds), which
// loads the whole lockfile and prints the declared dependencies, as
// list_deps reports them; not --all, which printing the whole tree took
// over 11 minutes at 10,000 locked packages on the 2-core machine (3.6 s at
// 1,000). npm ls runs up to coldLockToolMax locked packages only. load1 is
// the one-minute load average at the end.
func BenchmarkColdLock(b *testing.B) {
	bin := benchkit.Build(b, "github.com/symposium-dev/symposium-pm/pm-npm/cmd/symposium-pm-npm", b.TempDir())
	for _, n := range coldLockSizes {
		b.Run(fmt.Sprintf("locked=%d", n), func(b *testing.B) {
			ws := b.TempDir()
			direct := genLockedProject(b, ws, n)
			variants := benchkit.HookVariants(b, bin, ws, direct)
			if n <= coldLockToolMax {
				variants = withNpmLs(b, variants, ws, toolRounds(n), fmt.Sprintf("pkg-%05d@", direct-1), "--package-lock-only", "--depth=0")
			}
			benchkit.ReportRatios(b, benchkit.Interleave(b, 10, variants...), "npm-ls")
			benchkit.ReportLoad(b)
		})
	}
}

// BenchmarkColdLockInProcess measures list_deps without the persisted
// cache and without process start-up on a package-lock.json of 20,000
// locked packages: the decoding BenchmarkColdLock's cold variant pays.
func BenchmarkColdLockInProcess(b *testing.B) {
	ws := b.TempDir()
	direct := genLockedProject(b, ws, 20000)
	p, _ := newPM(b, ws, nil)
	p.cacheRoot = ""
	b.ReportAllocs()
	for b.Loop() {
		if deps, err := p.ListDeps(b.Context()); err != nil || len(deps) != direct {
			b.Fatal(len(deps), err)
		}
	}
}
