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
	os.Symlink(filepath.Join(root, "skills"), filepath.Join(root, "in"))
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
	} {
		err := contained(root, tc.rel)
		if (err == nil) != tc.ok {
			t.Errorf("contained(%q) = %v, want ok=%v", tc.rel, err, tc.ok)
		}
	}
}
