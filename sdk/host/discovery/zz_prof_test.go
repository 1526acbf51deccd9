//go:build unix

package discovery

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

func BenchmarkZZDiscover(b *testing.B) {
	ws, cache := "/tmp/comb/ws", "/tmp/comb/cache"
	env := map[string]string{"CARGO_HOME": "/tmp/comb/home", "HOME": "/tmp/comb/home", "VIRTUAL_ENV": ""}
	set := Setup(&config.Config{}, "/work/main/bin", cache)
	defer host.TuneGC()()
	for b.Loop() {
		pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: cache, Env: env}, set.Specs...)
		res := Discover(b.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms, Kinds: set.Kinds})
		pms.Close()
		if len(res.Plugins) != 1000 {
			b.Fatal(len(res.Plugins), res.Warnings)
		}
	}
}
