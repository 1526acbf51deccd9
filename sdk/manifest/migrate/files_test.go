package migrate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
	new := "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\nm"
	want := `--- f
+++ f
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -9,4 +9,5 @@
 i
 j
 k
-l
+L
+m
\ No newline at end of file
`
	if got := UnifiedDiff("f", []byte(old), []byte(new)); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := UnifiedDiff("f", []byte(old), []byte(old)); got != "" {
		t.Errorf("equal texts: got %q", got)
	}
	// An insertion into an empty file.
	if got := UnifiedDiff("f", nil, []byte("x\n")); got != "--- f\n+++ f\n@@ -0,0 +1,1 @@\n+x\n" {
		t.Errorf("from empty: got %q", got)
	}
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o640); err != nil {
		t.Fatal(err)
	}
}

func TestCollectAndWrite(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a", "SYMPOSIUM.toml"), "name = \"a\"\ncrates = [\"x\"]\n")
	write(t, filepath.Join(root, "b", "SKILL.md"), "---\nname: b\ndescription: d\ncrates: x\n---\n")
	write(t, filepath.Join(root, "c", "SYMPOSIUM.toml"), "name = \"c\"\ndepends-on = \"x\"\n")
	write(t, filepath.Join(root, "broken", "SYMPOSIUM.toml"), "name = \"\n")                            // no retired word: skipped
	write(t, filepath.Join(root, "brokencrates", "SYMPOSIUM.toml"), "crates = [\"x\"\n")                // could hold one: refused
	write(t, filepath.Join(root, "e", "SKILL.md"), "---\nname: e\ndescription: where: the path\n---\n") // not YAML, no crate: skipped
	write(t, filepath.Join(root, ".git", "SYMPOSIUM.toml"), "crates = [\"x\"]\n")
	write(t, filepath.Join(root, "d", "notes.toml"), "crates = [\"x\"]\n")
	outside := filepath.Join(t.TempDir(), "SYMPOSIUM.toml")
	write(t, outside, "crates = [\"x\"]\n")
	if err := os.MkdirAll(filepath.Join(root, "link"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "link", "SYMPOSIUM.toml")); err != nil {
		t.Fatal(err)
	}

	files, err := Collect(context.Background(), []string{root})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]File{}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f.Path)
		got[filepath.ToSlash(rel)] = f
	}
	if len(got) != 7 {
		t.Errorf("got %d files, want 7 (.git and other names skipped): %v", len(got), got)
	}
	for _, k := range []string{"a/SYMPOSIUM.toml", "b/SKILL.md"} {
		if f := got[k]; f.Err != nil || len(f.Changes) != 1 {
			t.Errorf("%s: want one change, got %+v", k, f)
		}
	}
	if f := got["c/SYMPOSIUM.toml"]; f.Err != nil || len(f.Changes) != 0 {
		t.Errorf("c: want no change, got %+v", f)
	}
	for _, k := range []string{"broken/SYMPOSIUM.toml", "e/SKILL.md"} {
		if f := got[k]; f.Err != nil || f.Skipped == nil {
			t.Errorf("%s: want skipped, got %+v", k, f)
		}
	}
	if f := got["brokencrates/SYMPOSIUM.toml"]; f.Err == nil {
		t.Errorf("brokencrates: want refused, got %+v", f)
	}
	if f := got["link/SYMPOSIUM.toml"]; f.Err == nil || !strings.Contains(f.Err.Error(), "symbolic link") {
		t.Errorf("link: want refused as a link, got %+v", f)
	}

	// A file named on the command line is migrated whatever its name.
	named, err := Collect(context.Background(), []string{filepath.Join(root, "d", "notes.toml")})
	if err != nil || len(named) != 1 || len(named[0].Changes) != 1 {
		t.Errorf("named file: %+v, %v", named, err)
	}

	// A directory named through a link is walked; a missing path is
	// reported.
	linkRoot := filepath.Join(t.TempDir(), "reg")
	if err := os.Symlink(filepath.Join(root, "a"), linkRoot); err != nil {
		t.Fatal(err)
	}
	through, err := Collect(context.Background(), []string{linkRoot, filepath.Join(root, "missing")})
	if err != nil || len(through) != 2 || len(through[0].Changes) != 1 || through[0].Path != filepath.Join(linkRoot, "SYMPOSIUM.toml") {
		t.Errorf("through a link: %+v, %v", through, err)
	}
	if len(through) == 2 && (through[1].Err == nil || !strings.Contains(through[1].Err.Error(), "no such file")) {
		t.Errorf("missing path: %+v", through[1])
	}

	a := got["a/SYMPOSIUM.toml"]
	if err := WriteFile(a.Path, a.New); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(a.Path)
	if err != nil || string(data) != "name = \"a\"\ndepends-on = [\"x\"]\n" {
		t.Errorf("written: %q, %v", data, err)
	}
	if info, err := os.Stat(a.Path); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode not kept: %v, %v", info.Mode(), err)
	}
	des, _ := os.ReadDir(filepath.Dir(a.Path))
	if len(des) != 1 {
		t.Errorf("temporary files left behind: %v", des)
	}
	if data, _ := os.ReadFile(outside); string(data) != "crates = [\"x\"]\n" {
		t.Errorf("file outside the root changed: %q", data)
	}
}
