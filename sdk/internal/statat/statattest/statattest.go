// Package statattest builds the tree that the tests of package statat,
// and of the packages that stat paths through it, compare against a stat
// of each whole path.
package statattest

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Tree makes, in a temporary directory, a node_modules of five packages
// (a to e, each a package.json and a skills/s directory), with links to a
// file, to a directory, up and across packages, a dangling one, and one to
// the whole tree, and returns node_modules' path and the paths to look at:
// files, directories, absent paths, paths through a file, with "..", each
// link, paths below a base reached through a link, a path too short to
// share a base, and relative paths. It skips the test where symbolic links
// cannot be made.
func Tree(t testing.TB) (nm string, paths []string) {
	t.Helper()
	dir := t.TempDir()
	nm = filepath.Join(dir, "real", "node_modules")
	for _, pkg := range []string{"a", "b", "c", "d", "e"} {
		p := filepath.Join(nm, pkg)
		err := errors.Join(os.MkdirAll(filepath.Join(p, "skills", "s"), 0o755),
			os.WriteFile(filepath.Join(p, "package.json"), []byte(`{"name":"`+pkg+`"}`), 0o644))
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{"", "/package.json", "/skills", "/skills/s", "/absent", "/package.json/x", "/skills/../package.json"} {
			paths = append(paths, p+rel)
		}
	}
	for link, target := range map[string]string{
		filepath.Join(nm, "a", "file-link"): "package.json",
		filepath.Join(nm, "a", "dir-link"):  "skills",
		filepath.Join(nm, "b", "skills2"):   "../a/skills",
		filepath.Join(nm, "a", "dangling"):  "nowhere",
		filepath.Join(dir, "ws"):            filepath.Join(dir, "real"),
		filepath.Join(nm, "linked"):         filepath.Join(nm, "b"),
	} {
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symbolic links:", err)
		}
		paths = append(paths, link, link+"/package.json")
	}
	for _, pkg := range []string{"a", "b", "c", "d", "linked"} {
		p := filepath.Join(dir, "ws", "node_modules", pkg)
		paths = append(paths, p, filepath.Join(p, "package.json"), filepath.Join(p, "skills"), filepath.Join(p, "dir-link"), filepath.Join(p, "absent"))
	}
	return nm, append(paths, "/", "/tmp", filepath.Join(dir, "absent", "x", "y"), "relative/x/y", "relative/x/z", "relative/x/w", "relative/x/v")
}
