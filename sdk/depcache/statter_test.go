package depcache

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/internal/statat/statattest"
)

// TestStatterMatchesTake: the statter's stamps are Take's on the paths of
// statattest.Tree (files, directories, absent paths, links to each and
// dangling links, under a base reached through a link, three levels below
// a base, paths too short to share a base), and an edit after the
// statter opened its base is seen.
func TestStatterMatchesTake(t *testing.T) {
	nm, paths := statattest.Tree(t)
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
