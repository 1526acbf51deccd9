package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestNoGoroutineLeaks runs the failure paths in process, including a
// download the host cancels while the index holds it halfway, and checks
// that the request returns promptly, nothing is cached, and no goroutine
// outlives the PM's calls (idle keep-alive connections closed).
func TestNoGoroutineLeaks(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	ix := demoIndex(t)
	cache := t.TempDir()
	p := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": ix.URL})
	ctx := context.Background()
	for _, name := range []string{"tampered", "escaper", "bomb", "cutoff", "no-such-project", "demo-plugin"} {
		p.Fetch(ctx, id(name, "*"), protocol.UpdateCheck)
	}
	ix.FailStatus.Store(500)
	p.Fetch(ctx, id("plain", "*"), protocol.UpdateCheck)
	p.Search(ctx, "plain")
	ix.FailStatus.Store(0)

	// Cancelled halfway through the download.
	ix.Stall.Store(true)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := p.Fetch(cctx, id("skillful", "*"), protocol.UpdateCheck)
		done <- err
	}()
	select {
	case <-ix.Stalled:
	case <-time.After(30 * time.Second):
		t.Fatal("download did not stall")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("a cancelled download succeeded")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fetch did not return after its context was cancelled")
	}
	if v := versionsIn(cache, "skillful"); len(v) != 0 {
		t.Errorf("cancelled download left %v", v)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "pypi", "tmp")); len(ents) != 0 {
		t.Errorf("cancelled download left %d temporary files", len(ents))
	}
	ix.Unstall()
	ix.Close()
	p.indexClient().HTTP.CloseIdleConnections()
}
