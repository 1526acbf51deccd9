//go:build unix

package discovery

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

// BenchmarkDiscoverRegistry measures the host's own work in discovery —
// enumerating a path registry, validating each offer, walking each enabled
// plugin's skills — with no PM process in the way: a registry of 1,000
// plugins of three skills each, every one enabled. Compare one core with
// two: go test -run '^$' -bench DiscoverRegistry -cpu 1,2 ./discovery
// (cpu-ms/op, the process's user and system time, says more than ns/op on
// a loaded machine).
func BenchmarkDiscoverRegistry(b *testing.B) {
	dir := b.TempDir()
	const plugins = 1000
	for i := range plugins {
		p := filepath.Join(dir, fmt.Sprintf("p%04d", i))
		for _, s := range []string{"a", "b", "c"} {
			if err := os.MkdirAll(filepath.Join(p, "skills", s), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(p, "skills", s, "SKILL.md"), []byte("---\nname: "+s+"\ndescription: d\n---\n"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(p, "SYMPOSIUM.toml"), []byte(fmt.Sprintf("name = \"p%04d\"\ndepends-on = \"*\"\n\n[[skills]]\nsource.path = \"skills\"\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws := b.TempDir()
	pms := host.NewRegistry(host.Options{Workspace: ws})
	defer pms.Close()
	o := Options{Workspace: ws, Config: &config.Config{}, PMs: pms, PathRegistries: []PathRegistry{{Name: "reg", Dir: dir}}}
	c0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		res := Discover(b.Context(), o)
		if len(res.Plugins) != plugins || res.Plugins[0].State != Enabled || res.Plugins[0].Skills != 3 {
			b.Fatalf("got %d plugins, first %+v, warnings %q", len(res.Plugins), res.Plugins[0], res.Warnings)
		}
	}
	b.ReportMetric(float64((cpuTime()-c0).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
