package npmpm

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestListDepsSameSizeRestoredMtime is issue 14 item 13 through the PM:
// package-lock.json rewritten to the same size with its modification time
// restored (as touch -d, a checkout of an old tree or a time-preserving copy
// leave it) is read again, not served from the list_deps cache.
func TestListDepsSameSizeRestoredMtime(t *testing.T) {
	ws := t.TempDir()
	lock := func(v string) string {
		return `{"name":"app","lockfileVersion":3,"packages":{"":{"dependencies":{"right":"^2.0.0"}},"node_modules/right":{"version":"` + v + `"}}}`
	}
	writeFiles(t, ws, map[string]string{"package.json": `{"name":"app","dependencies":{"right":"^2.0.0"}}`, "package-lock.json": lock("2.0.1")})
	p, _ := newPM(t, ws, nil)
	ctx := context.Background()
	got, err := p.ListDeps(ctx)
	if err != nil || !slices.Contains(ids(got), "right@2.0.1") {
		t.Fatalf("first list_deps: %v, %v", ids(got), err)
	}
	path := filepath.Join(ws, "package-lock.json")
	before, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, ws, map[string]string{"package-lock.json": lock("2.0.2")})
	if err := os.Chtimes(path, before.ModTime(), before.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(path); after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
		t.Fatalf("size and mtime not restored: %v %v -> %v %v", before.Size(), before.ModTime(), after.Size(), after.ModTime())
	}
	got, err = p.ListDeps(ctx)
	if err != nil || !slices.Contains(ids(got), "right@2.0.2") {
		t.Errorf("list_deps after a same-size rewrite with its mtime restored: %v, %v; want right@2.0.2", ids(got), err)
	}
}
