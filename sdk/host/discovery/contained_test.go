package discovery

import (
	"os"
	"path/filepath"
	"testing"
)

func TestContained(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(root, "skills", "a"), 0o755)
	os.Symlink(outside, filepath.Join(root, "out"))
	os.Symlink("skills", filepath.Join(root, "in"))
	// An absolute link is refused even when it names a directory inside:
	// links are resolved inside the root, where an absolute target cannot
	// be followed.
	os.Symlink(filepath.Join(root, "skills"), filepath.Join(root, "abs-in"))
	os.Symlink("/etc", filepath.Join(root, "abs"))
	os.Symlink("skills/../../x", filepath.Join(root, "rel-out"))
	r, err := os.OpenRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tc := range []struct {
		rel string
		ok  bool
	}{
		{"skills", true},
		{".", true},
		{"skills/a", true},
		{"missing", true}, // absent: nothing to escape with
		{"in", true},      // a symlink that stays inside
		{"../x", false},
		{"../../etc", false},
		{"skills/../../x", false},
		{"/etc", false},
		{"out", false}, // a symlink leading outside
		{"abs", false},
		{"abs-in", false},
		{"rel-out", false},
		{"in/a", true},
		{"out/x", false},
	} {
		err := contained(r, tc.rel)
		if (err == nil) != tc.ok {
			t.Errorf("contained(%q) = %v, want ok=%v", tc.rel, err, tc.ok)
		}
	}
}
