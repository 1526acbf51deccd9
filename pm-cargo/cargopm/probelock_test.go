package cargopm

import (
	"os"
	"path/filepath"
	"testing"
)

// TestProbeLock checks that a live probe directory is never taken for
// abandoned, that one whose lock nobody holds (its process died) is, and
// that one without a lock file is only when old.
func TestProbeLock(t *testing.T) {
	base := t.TempDir()
	dir, release, err := newProbeDir(base)
	if err != nil {
		t.Fatal(err)
	}
	if probeAbandoned(dir, true) {
		t.Error("a live probe directory is taken for abandoned")
	}
	release()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("release left %s: %v", dir, err)
	}
	dead := filepath.Join(base, "probe-dead")
	os.MkdirAll(dead, 0o755)
	os.WriteFile(filepath.Join(dead, ".lock"), nil, 0o644)
	if !probeAbandoned(dead, false) {
		t.Error("a probe directory with an unheld lock is not abandoned")
	}
	bare := filepath.Join(base, "probe-bare")
	os.MkdirAll(bare, 0o755)
	for old, want := range map[bool]bool{false: false, true: true} {
		if got := probeAbandoned(bare, old); got != want {
			t.Errorf("no lock file, old=%v: abandoned %v, want %v", old, got, want)
		}
	}
	if ents, _ := os.ReadDir(base); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}
