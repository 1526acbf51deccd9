package depcache

import (
	"strconv"
	"testing"
)

// TestStatterBase: the first paths below a directory are statted whole;
// once minShared paths taken share the directory two levels above them,
// the next are statted relative to it; a path alone below that directory
// (node_modules/<pkg>/skills/s) relative to the one three levels above,
// once that one is shared; a path sharing neither, whole. A directory
// among many used once each is forgotten, and counted afresh.
func TestStatterBase(t *testing.T) {
	st := newStatter()
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
