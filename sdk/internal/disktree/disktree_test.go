//go:build unix

package disktree

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	root := Write(t, map[string]string{
		"a/b.txt": "hello",
		"empty":   "dir",
		"link":    "->a/b.txt",
		"pipe":    "fifo",
	})
	if b, err := os.ReadFile(filepath.Join(root, "a", "b.txt")); err != nil || string(b) != "hello" {
		t.Errorf("a/b.txt = %q, %v", b, err)
	}
	for name, want := range map[string]os.FileMode{"empty": os.ModeDir, "link": os.ModeSymlink, "pipe": os.ModeNamedPipe} {
		fi, err := os.Lstat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Type() != want {
			t.Errorf("%s: type %v, want %v", name, fi.Mode().Type(), want)
		}
	}
	if target, err := os.Readlink(filepath.Join(root, "link")); err != nil || target != "a/b.txt" {
		t.Errorf("link -> %q, %v", target, err)
	}
}
