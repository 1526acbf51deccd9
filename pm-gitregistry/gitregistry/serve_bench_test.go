package gitregistry_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/gitregistry"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// BenchmarkHookServed is the cached hook at 10,000 entries served in
// process by the SDK's harness (initialize, active_plugins, end of input),
// so that a CPU profile shows the whole of the PM's side of the hook
// without the noise of spawning:
//
//	go test -run '^$' -bench HookServed -benchtime 20x -cpuprofile cpu.out ./gitregistry
func BenchmarkHookServed(b *testing.B) {
	const n = 10000
	repo := bigRegistry(b, n)
	ws, cache := b.TempDir(), b.TempDir()
	pm := gitregistry.New(gitregistry.Config{Name: "bench", URL: repo.Dir})
	err := pm.Initialize(context.Background(), &pmserver.Session{ProtocolVersion: 1, Workspace: ws, CacheDir: cache, Env: pmserver.NewEnv(nil), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := pm.Refresh(context.Background(), protocol.UpdateCheck, true); err != nil {
		b.Fatal(err)
	}
	if offers, err := pm.ActivePlugins(context.Background(), nil); err != nil || len(offers) != n {
		b.Fatal(len(offers), err)
	}
	pm.Close()
	input := hookInput(ws, cache, protocol.MethodActivePlugins)
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		pm := gitregistry.New(gitregistry.Config{Name: "bench", URL: repo.Dir})
		if err := pmserver.Serve(context.Background(), pm, strings.NewReader(input), &out, pmserver.WithLogger(slog.New(slog.DiscardHandler))); err != nil {
			b.Fatal(err)
		}
		pm.Close()
	}
	if !bytes.Contains(out.Bytes(), []byte(`"id":2,"result":[`)) && !bytes.Contains(out.Bytes(), []byte(`"result":[{`)) {
		b.Fatalf("no answer: %.300s", out.String())
	}
	b.ReportMetric(float64(out.Len())/(1<<20), "out-MiB")
}
