// Package disktree writes a directory tree described as a map for tests:
// files, empty directories, symbolic links and named pipes, which the
// walkers of packages and skills must meet on a real disk.
package disktree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Write builds files under a new temporary directory of tb and returns that
// directory. Each key is a slash-separated path; its value is the file's
// content, except that "->target" makes a symbolic link to target, "dir"
// an empty directory and "fifo" a named pipe (skipping the test where the
// system has none). Parent directories are created as needed.
func Write(tb testing.TB, files map[string]string) string {
	tb.Helper()
	root := tb.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			tb.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(c, "->"):
			err = os.Symlink(strings.TrimPrefix(c, "->"), full)
		case c == "dir":
			err = os.MkdirAll(full, 0o755)
		case c == "fifo":
			err = mkfifo(tb, full)
		default:
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	return root
}
