package depcache

import "testing"

// TestStatterBase: a path is statted relative to the directory two levels
// above it when enough paths share that directory, else three levels
// above (node_modules/<pkg>/skills/s, alone below <pkg>, from
// node_modules), else whole.
func TestStatterBase(t *testing.T) {
	st := newStatter()
	for _, p := range []string{"a", "b", "c", "d"} {
		st.count("/w/node_modules/" + p + "/package.json")
		st.count("/w/node_modules/" + p + "/skills")
		st.count("/w/node_modules/" + p + "/skills/s")
	}
	st.count("/w/package.json")
	for _, tc := range []struct{ path, base, rel string }{
		{"/w/node_modules/a/package.json", "/w/node_modules", "a/package.json"},
		{"/w/node_modules/b/skills/s", "/w/node_modules", "b/skills/s"},
		{"/w/node_modules/c", "/w", "node_modules/c"},
		{"/w/package.json", "", ""},
	} {
		base, rel, ok := st.base(tc.path)
		if ok != (tc.base != "") || base != tc.base || rel != tc.rel {
			t.Errorf("%s: statted from %q as %q (%v), want from %q as %q", tc.path, base, rel, ok, tc.base, tc.rel)
		}
	}
}
