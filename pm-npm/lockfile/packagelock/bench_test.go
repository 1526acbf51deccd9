package packagelock

import (
	"encoding/json"
	"fmt"
	"testing"
)

// genLock returns a lockfileVersion 3 document locking n packages, each
// entry shaped as npm writes it (resolved, integrity, license, engines,
// dependencies), and with the v1 tree v2 files repeat omitted.
func genLock(tb testing.TB, n int) []byte {
	tb.Helper()
	packages := map[string]any{"": map[string]any{"name": "app", "version": "1.0.0", "dependencies": map[string]string{"pkg-00000": "^1.0.0"}}}
	for i := range n {
		name := fmt.Sprintf("pkg-%05d", i)
		deps := map[string]string{}
		for k := 1; k <= 3; k++ {
			deps[fmt.Sprintf("pkg-%05d", (i*7+k)%n)] = "^1.0.0"
		}
		packages["node_modules/"+name] = map[string]any{
			"version":      "1.0.0",
			"resolved":     "https://registry.npmjs.org/" + name + "/-/" + name + "-1.0.0.tgz",
			"integrity":    "sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
			"license":      "MIT",
			"engines":      map[string]string{"node": ">=14"},
			"dependencies": deps,
			"dev":          i%3 == 0,
		}
	}
	data, err := json.MarshalIndent(map[string]any{"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": packages}, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkParse20k measures Parse on a 20,000-package lockfile (about 10
// MB), cold: one parse per iteration, nothing reused.
func BenchmarkParse20k(b *testing.B) {
	data := genLock(b, 20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := Parse(data)
		if err != nil || len(l.Packages) != 20001 {
			b.Fatalf("%v, %d packages", err, len(l.Packages))
		}
	}
}

// genV1Lock returns a lockfileVersion 1 document (npm 5/6) locking n
// packages as npm 6 writes it: nine in ten hoisted to the top of the
// "dependencies" tree, each of the rest nested under a top-level package
// as another version, every entry with resolved, integrity and requires.
func genV1Lock(tb testing.TB, n int) []byte {
	tb.Helper()
	top := n - n/10
	entry := func(name, version string, i int) map[string]any {
		requires := map[string]string{}
		for k := 1; k <= 3; k++ {
			requires[fmt.Sprintf("pkg-%05d", (i*7+k)%top)] = "^1.0.0"
		}
		e := map[string]any{
			"version":   version,
			"resolved":  "https://registry.npmjs.org/" + name + "/-/" + name + "-" + version + ".tgz",
			"integrity": "sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
			"requires":  requires,
		}
		if i%3 == 0 {
			e["dev"] = true
		}
		return e
	}
	deps := map[string]any{}
	for i := range top {
		name := fmt.Sprintf("pkg-%05d", i)
		deps[name] = entry(name, "1.0.0", i)
	}
	for i := range n - top {
		parent := deps[fmt.Sprintf("pkg-%05d", i*top/(n-top+1))].(map[string]any)
		nested, _ := parent["dependencies"].(map[string]any)
		if nested == nil {
			nested = map[string]any{}
			parent["dependencies"] = nested
		}
		name := fmt.Sprintf("pkg-%05d", (i*13)%top)
		nested[name] = entry(name, "2.0.0", i)
	}
	data, err := json.MarshalIndent(map[string]any{"name": "app", "version": "1.0.0", "lockfileVersion": 1, "requires": true, "dependencies": deps}, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// BenchmarkParseV1_20k measures Parse on a lockfileVersion 1 document of
// 20,000 packages (2,000 of them nested), cold.
func BenchmarkParseV1_20k(b *testing.B) {
	data := genV1Lock(b, 20000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		l, err := Parse(data)
		if err != nil || len(l.Dependencies) != 18000 || len(l.Packages) != 18000 {
			b.Fatalf("%v, %d top-level entries, %d packages", err, len(l.Dependencies), len(l.Packages))
		}
	}
}
