package atomicfile

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func entries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFile(t *testing.T) {
	for _, tt := range []struct {
		name     string
		existing bool
		perm     os.FileMode
	}{
		{"new file", false, 0o644},
		{"replaces", true, 0o600},
	} {
		dir := t.TempDir()
		p := filepath.Join(dir, "state.json")
		if tt.existing {
			os.WriteFile(p, []byte("old content, longer than the new"), 0o644)
		}
		if err := WriteFile(p, []byte("new"), tt.perm); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		got, _ := os.ReadFile(p)
		if string(got) != "new" {
			t.Errorf("%s: content %q", tt.name, got)
		}
		if fi, _ := os.Stat(p); runtime.GOOS != "windows" && fi.Mode().Perm() != tt.perm {
			t.Errorf("%s: mode %v, want %v", tt.name, fi.Mode().Perm(), tt.perm)
		}
		if names := entries(t, dir); len(names) != 1 {
			t.Errorf("%s: left %v", tt.name, names)
		}
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "missing", "f")
	if err := WriteFile(p, nil, 0o644); err == nil {
		t.Fatal("no error writing into a missing directory")
	}
}

func TestAbortKeepsTheOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("old"), 0o644)
	f, err := Create(p, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half")
	f.Abort()
	f.Abort()
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	got, _ := os.ReadFile(p)
	if string(got) != "old" {
		t.Errorf("content %q", got)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("left %v", names)
	}
}

func mkTree(t *testing.T, dir, content string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, dir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestPublishDir(t *testing.T) {
	base := t.TempDir()
	dest := filepath.Join(base, "pkg")
	first, second := filepath.Join(base, ".tmp-1"), filepath.Join(base, ".tmp-2")
	mkTree(t, first, "first")
	mkTree(t, second, "second")
	if won, err := PublishDir(first, dest); !won || err != nil {
		t.Fatalf("first: %v, %v", won, err)
	}
	if won, err := PublishDir(second, dest); won || err != nil {
		t.Fatalf("second: %v, %v", won, err)
	}
	if got := read(t, dest); got != "first" {
		t.Errorf("dest holds %q, want the first", got)
	}
	if names := entries(t, base); len(names) != 1 {
		t.Errorf("left %v", names)
	}
	if _, err := PublishDir(filepath.Join(base, ".missing"), filepath.Join(base, "other")); err == nil {
		t.Error("no error publishing a missing directory")
	}
}

func TestSwapDir(t *testing.T) {
	base := t.TempDir()
	dest := filepath.Join(base, "copy")
	tmp := filepath.Join(base, ".tmp")
	mkTree(t, tmp, "v1")
	if err := SwapDir(tmp, dest); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("tmp still there after a plain move: %v", err)
	}
	mkTree(t, tmp, "v2")
	if err := SwapDir(tmp, dest); err != nil {
		t.Fatal(err)
	}
	if got := read(t, dest); got != "v2" {
		t.Errorf("dest holds %q, want v2", got)
	}
	if got := read(t, tmp); got != "v1" {
		t.Errorf("tmp holds %q, want the old v1", got)
	}
	if names := entries(t, base); len(names) != 2 {
		t.Errorf("entries %v", names)
	}
	if err := SwapDir(filepath.Join(base, ".missing"), filepath.Join(base, "other")); err == nil {
		t.Error("no error swapping in a missing directory")
	}
}
