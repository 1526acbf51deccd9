package statat

import (
	"path/filepath"
	"strconv"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/internal/statat/statattest"
	"golang.org/x/sys/unix"
)

// TestBase: the first paths below a directory are statted whole;
// once minShared paths taken share the directory two levels above them,
// the next are statted relative to it; a path alone below that directory
// (node_modules/<pkg>/skills/s) relative to the one three levels above,
// once that one is shared; a path sharing neither, whole. A directory
// among many used once each is forgotten, and counted afresh.
func TestBase(t *testing.T) {
	var st Dirs
	check := func(path, wantBase, wantRel string) {
		t.Helper()
		b, rel, ok := st.base(path)
		base := ""
		if ok {
			base = b.dir
		}
		if ok != (wantBase != "") || base != wantBase || rel != wantRel {
			t.Errorf("%s: statted from %q as %q (%v), want from %q as %q", path, base, rel, ok, wantBase, wantRel)
		}
	}
	for _, tc := range []struct{ path, base, rel string }{
		{"/w/node_modules/a/package.json", "", ""},
		{"/w/node_modules/a/skills/s", "", ""},
		{"/w/node_modules/b/package.json", "", ""},
		{"/w/node_modules/b/skills/s", "/w/node_modules", "b/skills/s"}, // the fourth below node_modules
		{"/w/node_modules/c/package.json", "/w/node_modules", "c/package.json"},
		{"/w/node_modules/c/skills/s", "/w/node_modules", "c/skills/s"},
		{"/w/node_modules/d/package.json", "/w/node_modules", "d/package.json"},
		{"/w/node_modules/d/skills/s", "/w/node_modules", "d/skills/s"},
		{"/w/node_modules/d", "", ""},                 // /w counted twice before, for a and b's package.json
		{"/w/node_modules/e", "/w", "node_modules/e"}, // the fourth
		{"/x/y/z", "", ""},
	} {
		check(tc.path, tc.base, tc.rel)
	}
	// recentBases directories used once each push /w/node_modules out of
	// the table; the next path below it is counted afresh, and statted
	// whole.
	for i := range recentBases {
		st.base("/o/" + strconv.Itoa(i) + "/x/f")
	}
	check("/w/node_modules/h/package.json", "", "")
}

// TestMatchesWhole: Stat and Lstat give what unix.Stat and unix.Lstat give
// on the whole path (the same file, or the same error), on the paths of
// statattest.Tree (files, directories, absent paths, links to each and
// dangling links, below a base reached through a link, with ".." in the
// path), twice over, the second time through the directories opened the
// first.
func TestMatchesWhole(t *testing.T) {
	nm, paths := statattest.Tree(t)
	same := func(a, b unix.Stat_t) bool {
		return a.Dev == b.Dev && a.Ino == b.Ino && a.Mode == b.Mode && a.Size == b.Size
	}
	var d Dirs
	defer d.Close()
	for range 2 {
		for _, p := range paths {
			var got, want unix.Stat_t
			gotErr, wantErr := d.Stat(p, &got), unix.Stat(p, &want)
			if gotErr != wantErr || gotErr == nil && !same(got, want) {
				t.Errorf("Stat(%s) = %v, %v; unix.Stat %v, %v", p, got.Ino, gotErr, want.Ino, wantErr)
			}
			gotErr, wantErr = d.Lstat(p, &got), unix.Lstat(p, &want)
			if gotErr != wantErr || gotErr == nil && !same(got, want) {
				t.Errorf("Lstat(%s) = %v %o, %v; unix.Lstat %v %o, %v", p, got.Ino, got.Mode, gotErr, want.Ino, want.Mode, wantErr)
			}
		}
	}
	// The paths above did go through an opened base directory.
	var e Dirs
	defer e.Close()
	for _, pkg := range []string{"a", "b", "c", "d"} {
		var st unix.Stat_t
		e.Lstat(filepath.Join(nm, pkg, "package.json"), &st)
	}
	if fd, rel := e.at(filepath.Join(nm, "e", "package.json")); fd == unix.AT_FDCWD || rel != "e/package.json" {
		t.Errorf("the fifth path below %s is statted from %d as %q, want from an opened base as e/package.json", nm, fd, rel)
	}
}
