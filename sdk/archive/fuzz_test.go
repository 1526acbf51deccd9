package archive

import (
	"archive/tar"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// FuzzExtract feeds arbitrary bytes to the three extractors under small
// caps: the result is success or an *Error (never a panic nor another
// failure), a failure leaves the root empty, and a success leaves only
// regular files and directories inside the root.
func FuzzExtract(f *testing.F) {
	pj := entry{name: "package/package.json", body: "{}"}
	seeds := [][]entry{
		{pj},
		{pj, {name: "package/../x", body: "x"}},
		{pj, {name: "package/l", typ: tar.TypeSymlink, link: "/"}},
		{pj, {name: "package/A", body: "1"}, {name: "package/a", body: "2"}},
		{pj, {name: "package/d/", typ: tar.TypeDir}, {name: "package/d/f", body: "f", mode: 0o755}},
	}
	for _, es := range seeds {
		f.Add(tgzOf(f, es...), uint8(0))
		f.Add(tarOf(f, es...), uint8(1))
		if es[len(es)-1].typ == 0 || es[len(es)-1].typ == tar.TypeReg {
			f.Add(zipOf(f, es...), uint8(2))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		dir := t.TempDir()
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		opts := Options{Name: "fuzz", Strip: int(format>>2) & 1,
			Limits: Limits{MaxBytes: 1 << 20, MaxEntries: 64, Ratio: 100, Allowance: 64 << 10}}
		err = run([]string{"tgz", "tar", "zip"}[format%3], data, root, opts)
		if err != nil {
			if !IsContent(err) {
				t.Fatalf("not an *Error: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("a refused archive left %d entries", len(ents))
			}
			return
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("extracted a non-regular file %s (%v)", p, d.Type())
			}
			return nil
		})
	})
}
