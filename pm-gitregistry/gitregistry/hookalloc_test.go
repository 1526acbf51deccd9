package gitregistry_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"hash"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/gitregistry"
	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// hashWriter hashes what is written and counts its bytes and lines,
// holding none of it.
type hashWriter struct {
	h        hash.Hash
	n, lines int
}

func (w *hashWriter) Write(p []byte) (int, error) {
	w.h.Write(p)
	w.n += len(p)
	w.lines += bytes.Count(p, []byte("\n"))
	return len(p), nil
}

// bulkyRegistryFiles is a registry of n plugins, each depending on deps
// crates, and n bare skills (dependentRegistryFiles): an active_plugins
// answer of about 2 KiB an entry at 60 dependencies, where registryFiles'
// entries give 400 bytes, so a registry of a megabyte's answer is a fifth
// of the files to write, commit and clone.
func bulkyRegistryFiles(n, deps int) map[string]string {
	return dependentRegistryFiles(2*n, func(i int) string {
		items := make([]string, deps)
		for d := range items {
			items[d] = fmt.Sprintf("%q", fmt.Sprintf("crate-%05d-dependency-%02d>=1.%d", i, d, d))
		}
		return strings.Join(items, ", ")
	})
}

// TestHookDoesNotHoldAnswer: a cached hook (initialize, active_plugins,
// end of input) served in process sends the kept answer, byte for byte
// what the usual path sent, while allocating a small fraction of it: the
// answer is streamed from the index file, never read into memory whole.
// The answer is over a megabyte from 600 entries with long dependency
// lists: what is measured is the answer's bytes against the hook's fixed
// allocations, which do not grow with the entries' size.
func TestHookDoesNotHoldAnswer(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(bulkyRegistryFiles(300, 80))
	repo.Commit("registry")
	ws, cache := t.TempDir(), t.TempDir()
	serve := func(method string) (sum []byte, size int, alloc uint64, logs string) {
		t.Helper()
		var log bytes.Buffer
		w := &hashWriter{h: sha256.New()}
		pm := gitregistry.New(gitregistry.Config{Name: "bench", URL: repo.Dir})
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := pmserver.Serve(context.Background(), pm, strings.NewReader(hookInput(ws, cache, method)), w,
			pmserver.WithLogger(slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))))
		runtime.ReadMemStats(&after)
		pm.Close()
		if err != nil || w.lines != 2 {
			t.Fatalf("%s: %v; %d lines", method, err, w.lines)
		}
		return w.h.Sum(nil), w.n, after.TotalAlloc - before.TotalAlloc, log.String()
	}
	serve(protocol.MethodRefresh)
	idx := indexFiles(t, cache)
	if len(idx) == 0 {
		t.Fatal("no persisted index after the refresh")
	}
	for _, p := range idx {
		os.Remove(p) // for the usual path to answer, and keep the answer again
	}
	usual, size, _, logs := serve(protocol.MethodActivePlugins)
	if strings.Contains(logs, "served the kept active_plugins answer") {
		t.Fatalf("the first hook served a kept answer:\n%s", logs)
	}
	if size < 1<<20 {
		t.Fatalf("the hook wrote %d bytes, want an answer of over 1 MiB", size)
	}
	for range 2 {
		kept, keptSize, alloc, logs := serve(protocol.MethodActivePlugins)
		if !strings.Contains(logs, "served the kept active_plugins answer") {
			t.Fatalf("the hook did not serve the kept answer:\n%s", logs)
		}
		if !bytes.Equal(kept, usual) || keptSize != size {
			t.Errorf("the streamed hook sent %d bytes, not the usual path's %d bytes", keptSize, size)
		}
		// What a hook allocates besides the answer (the harness's 64 KiB
		// buffer, the cache's state, the head) is about 180 KiB whatever
		// the registry's size, and up to 330 KiB under the race detector;
		// reading the answer whole would add at least the answer's 1.1 MiB.
		if alloc > uint64(size)/2 {
			t.Errorf("the hook allocated %d bytes for an answer of %d", alloc, size)
		}
	}
}
