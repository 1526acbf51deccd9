package cli

import (
	"runtime"
	"testing"
)

// TestLimitProcs: discover's processor limit applies and is undone, and
// GOMAXPROCS in the environment wins over it.
func TestLimitProcs(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	runtime.GOMAXPROCS(2)
	t.Setenv("GOMAXPROCS", "")
	restore := limitProcs(1)
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Errorf("GOMAXPROCS %d under the limit, want 1", got)
	}
	restore()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("GOMAXPROCS %d after restore, want 2", got)
	}
	t.Setenv("GOMAXPROCS", "2")
	limitProcs(1)()
	if got := runtime.GOMAXPROCS(0); got != 2 {
		t.Errorf("GOMAXPROCS %d with the environment's 2, want 2", got)
	}
}
