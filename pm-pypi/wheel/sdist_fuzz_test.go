package wheel

import (
	"archive/tar"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
)

// FuzzExtractSdist feeds arbitrary bytes as a .tar.gz: extraction either
// fails leaving nothing, or writes only regular files and directories
// inside its destination.
func FuzzExtractSdist(f *testing.F) {
	f.Add(fakeindex.BuildSdist(fakeindex.Package{Name: "a", Version: "1", Files: map[string]string{"a/x": "y"}}))
	f.Add(tgzOf(nil, []*tar.Header{{Name: "a-1/PKG-INFO"}, {Name: "a-1/../../e"}}, []string{meta, "x"}))
	f.Add(tgzOf(nil, []*tar.Header{{Name: "a-1/PKG-INFO"}, {Name: "a-1/A"}, {Name: "a-1/a"}}, []string{meta, "x", "y"}))
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		src := filepath.Join(dir, "a-1.tar.gz")
		os.WriteFile(src, b, 0o644)
		dest := filepath.Join(dir, "out")
		_, err := ExtractSdist(context.Background(), src, dest, Limits{MaxEntries: 100, MaxFileSize: 1 << 20, MaxTotal: 4 << 20, MaxRatio: 200})
		if err != nil {
			if ents, _ := os.ReadDir(dir); len(ents) != 1 {
				t.Fatalf("failed extraction left %d entries", len(ents)-1)
			}
			return
		}
		filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("extracted a non-regular file %s", p)
			}
			if rel, _ := filepath.Rel(dest, p); strings.HasPrefix(rel, "..") {
				t.Fatalf("extracted outside: %s", p)
			}
			return nil
		})
	})
}
