package venv

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkLookupAll measures finding 500 distributions in a site-packages
// of 500, each METADATA a realistic header (30 fields) and a 20 KB
// description: the METADATA reads of an active_plugins or list_deps over
// a virtualenv. allocs/op and B/op are the figures the per-file buffers
// show in.
func BenchmarkLookupAll(b *testing.B) {
	site := filepath.Join(b.TempDir(), "lib", "python3.12", "site-packages")
	var header strings.Builder
	for i := range 28 {
		fmt.Fprintf(&header, "Classifier: Topic :: Software Development :: Libraries :: %d\n", i)
	}
	body := strings.Repeat("A long description line of the project's README.\n", 400)
	var names []string
	for i := range 500 {
		n := fmt.Sprintf("dist%04d", i)
		di := filepath.Join(site, n+"-1.0.dist-info")
		if err := os.MkdirAll(di, 0o755); err != nil {
			b.Fatal(err)
		}
		meta := "Metadata-Version: 2.1\nName: " + n + "\nVersion: 1.0\n" + header.String() + "\n" + body
		if err := os.WriteFile(filepath.Join(di, "METADATA"), []byte(meta), 0o644); err != nil {
			b.Fatal(err)
		}
		names = append(names, n)
	}
	env := &Env{Root: filepath.Dir(filepath.Dir(filepath.Dir(site))), SitePackages: []string{site}}
	b.ReportAllocs()
	for b.Loop() {
		if got, passed := env.LookupAll(names); len(got) != 500 || passed != nil {
			b.Fatalf("%d found", len(got))
		}
	}
}
