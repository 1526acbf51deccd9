package gitregistry

import (
	"context"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestConformance runs the SDK's conformance suite against the built
// binary, on a registry never fetched and on a populated one.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	f := newFixture(t)
	bin := benchkit.Build(t, "github.com/symposium-dev/symposium-pm/pm-gitregistry/cmd/symposium-pm-gitregistry", t.TempDir())
	cmd := []string{bin, "--name", "recs", "--url", f.bare}
	t.Run("empty", func(t *testing.T) {
		pmtest.Run(t, cmd, pmtest.WithWorkspace(t.TempDir()), pmtest.WithCacheDir(t.TempDir()))
	})
	t.Run("populated", func(t *testing.T) {
		cache := t.TempDir()
		p, _ := newPM(t, Config{URL: f.bare}, cache, nil)
		if _, err := p.Refresh(context.Background(), protocol.UpdateCheck, false); err != nil {
			t.Fatal(err)
		}
		p.Close()
		pmtest.Run(t, cmd, pmtest.WithWorkspace(t.TempDir()), pmtest.WithCacheDir(cache),
			pmtest.WithFetchIDs(protocol.PackageID{PM: "recs", Name: "group/web/react", Version: f.commit}))
	})
}
