package pmserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// benchPM answers like the null PM: nothing listed, nothing offered.
type benchPM struct{}

func (benchPM) Name() string                                           { return "bench" }
func (benchPM) Initialize(context.Context, *Session) error             { return nil }
func (benchPM) ListDeps(context.Context) ([]protocol.PackageID, error) { return nil, nil }
func (benchPM) ActivePlugins(context.Context, []protocol.PackageID) ([]protocol.Offer, error) {
	return nil, nil
}
func (benchPM) LoadPlugin(context.Context, protocol.PackageID) ([]protocol.Offer, error) {
	return nil, nil
}
func (benchPM) Fetch(_ context.Context, id protocol.PackageID, _ protocol.UpdateLevel) (protocol.FetchResult, error) {
	return protocol.FetchResult{}, protocol.ErrNotFound(id, "none")
}

// hookDeps returns n dependencies as a host lists them.
func hookDeps(n int) []protocol.PackageID {
	deps := make([]protocol.PackageID, n)
	for i := range deps {
		deps[i] = protocol.PackageID{PM: "npm", Name: fmt.Sprintf("dep-%04d", i), Version: fmt.Sprintf("1.0.%d", i)}
	}
	return deps
}

// hookInput returns the requests of a whole hook for n dependencies, one
// per line, encoded as sdk/host and benchkit.RunWholeHook encode them.
func hookInput(tb testing.TB, n int) []byte {
	tb.Helper()
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, req := range []map[string]any{
		{"jsonrpc": "2.0", "id": 1, "method": protocol.MethodInitialize,
			"params": protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: "/ws", CacheDir: "/cache", Env: map[string]string{}}},
		{"jsonrpc": "2.0", "id": 2, "method": protocol.MethodListDeps},
		{"jsonrpc": "2.0", "id": 3, "method": protocol.MethodActivePlugins, "params": protocol.ActivePluginsParams{Deps: hookDeps(n)}},
	} {
		if err := enc.Encode(req); err != nil {
			tb.Fatal(err)
		}
	}
	return in.Bytes()
}

// BenchmarkServeWholeHook is the harness's share of a whole hook with 400
// dependencies (initialize, list_deps, active_plugins), in process: what
// every PM pays on top of its own answers, without process start-up.
func BenchmarkServeWholeHook(b *testing.B) {
	in := hookInput(b, 400)
	b.ReportAllocs()
	for b.Loop() {
		if err := Serve(context.Background(), benchPM{}, bytes.NewReader(in), io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAdmitActivePlugins is admission of one active_plugins request
// line for 400 dependencies.
func BenchmarkAdmitActivePlugins(b *testing.B) {
	line := bytes.Split(hookInput(b, 400), []byte("\n"))[2]
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for b.Loop() {
		if v := admit(line); !v.forward {
			b.Fatalf("not forwarded: %+v", v)
		}
	}
}

// BenchmarkDecodeActivePlugins is decoding active_plugins params for 400
// dependencies.
func BenchmarkDecodeActivePlugins(b *testing.B) {
	params, err := json.Marshal(protocol.ActivePluginsParams{Deps: hookDeps(400)})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(params)))
	b.ReportAllocs()
	for b.Loop() {
		var p protocol.ActivePluginsParams
		if err := decode(protocol.MethodActivePlugins, params, &p); err != nil || len(p.Deps) != 400 {
			b.Fatal(err)
		}
	}
}
