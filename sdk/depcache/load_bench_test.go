package depcache_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// BenchmarkCachedHook measures what a PM's cached hook costs in depcache,
// on the shape of npm's answer for 400 installed packages each embedding a
// plugin (node_modules/<pkg>/package.json and skills/s/SKILL.md): the
// list_deps entry (each package.json) loaded, then the encoded
// active_plugins entry (each package.json, package directory, skills and
// skills/s) loaded trusting the stamps the first load verified. It runs
// in one process, so a fresh process's page faults are not in it; the
// whole-hook benchmarks of the PMs measure those.
func BenchmarkCachedHook(b *testing.B) {
	const n = 400
	dir := b.TempDir()
	var list, offers depcache.Recorder
	var answer []protocol.Offer
	for i := range n {
		pkg := filepath.Join(dir, "node_modules", fmt.Sprintf("pkg-%04d", i))
		write(b, filepath.Join(pkg, "package.json"), fmt.Sprintf(`{"name":"pkg-%04d","version":"1.0.0"}`, i))
		write(b, filepath.Join(pkg, "skills", "s", "SKILL.md"), "---\nname: s\ndescription: d\n---\n")
		answer = append(answer, protocol.Offer{
			ID:       protocol.PackageID{PM: "npm", Name: fmt.Sprintf("pkg-%04d", i), Version: "1.0.0"},
			Root:     pkg,
			Manifest: json.RawMessage(fmt.Sprintf(`{"name":"pkg-%04d","skills":[{"source":{"path":"skills"}}]}`, i)),
		})
	}
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	for _, o := range answer {
		list.Observe(filepath.Join(o.Root, "package.json"))
		offers.Observe(filepath.Join(o.Root, "package.json"))
		offers.ObserveDir(o.Root)
		offers.ObserveTree(o.Root, "skills")
	}
	enc, err := json.Marshal(answer)
	if err != nil {
		b.Fatal(err)
	}
	var v depcache.Verified
	c := depcache.New(b.TempDir()).Remembering(&v)
	if err := c.Store("list", list.Stamps(), []byte("deps")); err != nil {
		b.Fatal(err)
	}
	if err := c.StoreRawOffers("offers", offers.Stamps(), enc); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, ok := c.Load("list"); !ok {
			b.Fatal("list entry missed")
		}
		if _, ok := c.LoadRawOffers("offers", nil); !ok {
			b.Fatal("offers entry missed")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/n, "µs/offer")
}
