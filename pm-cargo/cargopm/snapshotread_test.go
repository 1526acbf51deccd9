package cargopm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

// TestHookReadsSnapshotOnce checks that list_deps and active_plugins of one
// hook share one read of the persisted snapshot (depcache.SharedRead): once
// list_deps has read it, active_plugins' layout comes from that read, even
// with the persisted entry gone; past depcache.VerifiedWindow it is read
// (here: computed and stored) again.
func TestHookReadsSnapshotOnce(t *testing.T) {
	ws, home := cacheWorkspace(t, t.TempDir())
	cache := t.TempDir()
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	session := func(p *PM) {
		t.Helper()
		err := p.Initialize(context.Background(), &pmserver.Session{Workspace: ws, CacheDir: cache,
			Env: pmserver.NewEnv(map[string]string{"CARGO_HOME": home, "HOME": home}), Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
	}
	// The first PM computes and persists the snapshot.
	first := New()
	session(first)
	if _, err := first.snapshot(context.Background(), depsPart|layoutPart); err != nil {
		t.Fatal(err)
	}
	entries := func() []string {
		got, _ := filepath.Glob(filepath.Join(cache, "cargo", "deps", "*"))
		return got
	}
	if len(entries()) == 0 {
		t.Fatal("no persisted snapshot")
	}

	p := New()
	session(p)
	// list_deps and active_plugins pipelined: both ask at once.
	var wg sync.WaitGroup
	var served bool
	wg.Go(func() {
		_, ok, err := p.ListDepsRaw(context.Background())
		served = ok && err == nil
	})
	wg.Go(func() {
		if _, err := p.snapshot(context.Background(), layoutPart); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	if !served {
		t.Fatal("list_deps was not served from the persisted snapshot")
	}
	for _, f := range entries() {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	s, err := p.snapshot(context.Background(), layoutPart)
	if err != nil || !s.Found {
		t.Fatalf("snapshot after list_deps: %+v, %v", s, err)
	}
	if got := entries(); len(got) != 0 {
		t.Fatalf("the snapshot was read again (and, gone, computed and stored: %v) within the hook", got)
	}

	time.Sleep(depcache.VerifiedWindow + 50*time.Millisecond)
	if _, err := p.snapshot(context.Background(), layoutPart); err != nil {
		t.Fatal(err)
	}
	if len(entries()) == 0 {
		t.Fatalf("past %v the shared read was still trusted: the missing snapshot was not computed again", depcache.VerifiedWindow)
	}
}
