package gitregistry

import (
	"context"
	"os/exec"
	"strconv"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestConformance runs the SDK's conformance suite against the built
// binary, on a registry never fetched and on a populated one.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("pipes the protocol's 64 MiB line through the PM")
	}
	f := newFixture(t)
	// The binary TestMain puts on PATH: this test binary, run as
	// symposium-pm-gitregistry, which calls Main as
	// cmd/symposium-pm-gitregistry does. No build (a link of the whole PM)
	// per test run.
	bin, err := exec.LookPath("symposium-pm-gitregistry")
	if err != nil {
		t.Fatal(err)
	}
	cmd := []string{bin, "--name", "recs", "--url", f.bare}
	t.Run("empty", func(t *testing.T) {
		pmtest.Run(t, cmd, pmtest.WithWorkspace(t.TempDir()), pmtest.WithCacheDir(t.TempDir()))
	})
	// The populated run lowers the request-line limit, on both sides, to
	// 1 MiB: the empty run above pipes the protocol's 64 MiB through this
	// PM, and the oversize-line check's verdict does not depend on the size.
	const lineLimit = 1 << 20
	cmd = append(cmd, "--max-message-size", strconv.Itoa(lineLimit))
	t.Run("populated", func(t *testing.T) {
		cache := t.TempDir()
		p, _ := newPM(t, Config{URL: f.bare}, cache, nil)
		if _, err := p.Refresh(context.Background(), protocol.UpdateCheck, false); err != nil {
			t.Fatal(err)
		}
		p.Close()
		pmtest.Run(t, cmd, pmtest.WithWorkspace(t.TempDir()), pmtest.WithCacheDir(cache), pmtest.WithLineLimit(lineLimit),
			pmtest.WithFetchIDs(protocol.PackageID{PM: "recs", Name: "group/web/react", Version: f.commit}))
	})
}
