package depcache

import (
	"os"
	"path/filepath"
	"testing"
)

// TestStatterMatchesTake: the statter's stamps are Take's, for files,
// directories, absent paths, links to each and dangling links, under a
// base reached through a link, three levels below a base, and for paths
// too short to share a base.
func TestStatterMatchesTake(t *testing.T) {
	dir := t.TempDir()
	nm := filepath.Join(dir, "real", "node_modules")
	var paths []string
	for _, pkg := range []string{"a", "b", "c", "d", "e"} {
		p := filepath.Join(nm, pkg)
		if err := os.MkdirAll(filepath.Join(p, "skills", "s"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "package.json"), []byte(`{"name":"`+pkg+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p, filepath.Join(p, "package.json"), filepath.Join(p, "SYMPOSIUM.toml"), filepath.Join(p, "skills"), filepath.Join(p, "skills", "s"))
	}
	links := map[string]string{
		filepath.Join(nm, "a", "file-link"): "package.json",
		filepath.Join(nm, "a", "dir-link"):  "skills",
		filepath.Join(nm, "a", "dangling"):  "nowhere",
		filepath.Join(dir, "ws"):            filepath.Join(dir, "real"),
		filepath.Join(nm, "linked"):         filepath.Join(nm, "b"),
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Skip("no symbolic links:", err)
		}
		paths = append(paths, link)
	}
	viaLink := filepath.Join(dir, "ws", "node_modules")
	for _, pkg := range []string{"a", "b", "c", "d", "linked"} {
		paths = append(paths, filepath.Join(viaLink, pkg), filepath.Join(viaLink, pkg, "package.json"), filepath.Join(viaLink, pkg, "absent"))
	}
	paths = append(paths, "/", "/tmp", filepath.Join(dir, "absent", "x", "y"), "relative/x/y", "relative/x/z", "relative/x/w", "relative/x/v")
	st := newStatter()
	defer st.close()
	for range 2 { // the second round uses the directories opened in the first
		for _, p := range paths {
			if got, want := st.take(p), Take(p); got != want {
				t.Errorf("%s: statter %+v, Take %+v", p, got, want)
			}
		}
	}
	// A file changed after the statter opened its base is seen changed.
	pj := filepath.Join(nm, "c", "package.json")
	before := st.take(pj)
	if err := os.WriteFile(pj, []byte(`{"name":"c","version":"2.0.0"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if after := st.take(pj); after == before || after != Take(pj) {
		t.Errorf("edit not seen: before %+v, after %+v, Take %+v", before, after, Take(pj))
	}
}
