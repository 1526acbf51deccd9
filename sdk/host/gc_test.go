package host

import (
	"os"
	"runtime/debug"
	"testing"
)

// TuneGC sets the collector for a short host run and restores it; the
// user's GOGC and GOMEMLIMIT win over it.
func TestTuneGC(t *testing.T) {
	for _, tc := range []struct {
		env       map[string]string
		pct       int
		limitSet  bool
		wantLimit int64
	}{
		{env: nil, pct: GCPercent, limitSet: true, wantLimit: GCMemoryLimit},
		{env: map[string]string{"GOGC": "100"}, pct: 77, limitSet: true, wantLimit: GCMemoryLimit},
		{env: map[string]string{"GOMEMLIMIT": "1GiB"}, pct: GCPercent},
	} {
		for _, k := range []string{"GOGC", "GOMEMLIMIT"} {
			t.Setenv(k, "") // restored after the test
			os.Unsetenv(k)
		}
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		prevPct := debug.SetGCPercent(77)
		prevLimit := debug.SetMemoryLimit(1 << 40)
		restore := TuneGC()
		gotPct := debug.SetGCPercent(-1)
		debug.SetGCPercent(gotPct)
		gotLimit := debug.SetMemoryLimit(-1)
		if gotPct != tc.pct {
			t.Errorf("env %v: GC percent %d, want %d", tc.env, gotPct, tc.pct)
		}
		if want := int64(1 << 40); tc.limitSet {
			if gotLimit != tc.wantLimit {
				t.Errorf("env %v: memory limit %d, want %d", tc.env, gotLimit, tc.wantLimit)
			}
		} else if gotLimit != want {
			t.Errorf("env %v: memory limit %d, want it left at %d", tc.env, gotLimit, want)
		}
		restore()
		if p, l := debug.SetGCPercent(prevPct), debug.SetMemoryLimit(prevLimit); p != 77 || l != 1<<40 {
			t.Errorf("env %v: restored to %d, %d; want 77, %d", tc.env, p, l, int64(1<<40))
		}
	}
}
