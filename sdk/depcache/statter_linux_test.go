package depcache

import "testing"

// TestStatterBase: the first paths below a directory are statted whole;
// once minShared paths taken share the directory two levels above them,
// the next are statted relative to it; a path alone below that directory
// (node_modules/<pkg>/skills/s) relative to the one three levels above,
// once that one is shared; a path sharing neither, whole.
func TestStatterBase(t *testing.T) {
	st := newStatter()
	for _, tc := range []struct{ path, base, rel string }{
		{"/w/node_modules/a/package.json", "", ""},
		{"/w/node_modules/a/skills/s", "", ""},
		{"/w/node_modules/b/package.json", "", ""},
		{"/w/node_modules/b/skills/s", "/w/node_modules", "b/skills/s"}, // the fourth below node_modules
		{"/w/node_modules/c/package.json", "/w/node_modules", "c/package.json"},
		{"/w/node_modules/c/skills/s", "/w/node_modules", "c/skills/s"},
		{"/w/node_modules/d/package.json", "/w/node_modules", "d/package.json"},
		{"/w/node_modules/d/skills/s", "/w/node_modules", "d/skills/s"},
		{"/w/node_modules/d", "/w", "node_modules/d"},
		{"/x/y/z", "", ""},
	} {
		base, rel, ok := st.base(tc.path)
		if ok != (tc.base != "") || base != tc.base || rel != tc.rel {
			t.Errorf("%s: statted from %q as %q (%v), want from %q as %q", tc.path, base, rel, ok, tc.base, tc.rel)
		}
	}
}
