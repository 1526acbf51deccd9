package lockfile

import "testing"

// TestCleanImporter: an importer path is cleaned to one spelling, and
// cleaning it again changes nothing: a lock stores its importers cleaned and
// Resolve cleans the importer asked for, so a second cleaning that changed
// the path ("././a" stored as "./a", asked for as "a") lost the member.
func TestCleanImporter(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{".", ""},
		{"./", ""},
		{"/", ""},
		{"packages/a", "packages/a"},
		{"./packages/a/", "packages/a"},
		{"/packages/a", "packages/a"},
		{"././a", "a"},
		{".//a", "a"},
		{"a//b/./c", "a/b/c"},
		{"a/../b", "b"},
		{"../x", "../x"},
		{"./../x", "../x"},
	} {
		got := CleanImporter(tc.in)
		if got != tc.want {
			t.Errorf("CleanImporter(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if again := CleanImporter(got); again != got {
			t.Errorf("CleanImporter(%q) = %q, cleaned again %q", tc.in, got, again)
		}
	}
}
