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
