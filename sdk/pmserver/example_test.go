package pmserver_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// shelfPM is a tiny PM: one plugin in a fixed directory, and one dependency.
type shelfPM struct{ root string }

func (p *shelfPM) Name() string { return "shelf" }

func (p *shelfPM) Initialize(ctx context.Context, s *pmserver.Session) error {
	p.root = s.Workspace + "/plugins/hello"
	return nil
}

func (p *shelfPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	return []protocol.Offer{{
		ID:       protocol.PackageID{PM: "shelf", Name: "hello", Version: "1.0.0"},
		Root:     p.root,
		Manifest: []byte(`{"name":"hello","skills":[{"source":{"path":"skills"}}]}`),
	}}, nil
}

func (p *shelfPM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	if id.Name != "hello" {
		return nil, protocol.ErrNotFound(id, "the shelf has no %q", id.Name)
	}
	return p.ActivePlugins(ctx, nil)
}

func (p *shelfPM) Fetch(ctx context.Context, id protocol.PackageID, u protocol.UpdateLevel) (protocol.FetchResult, error) {
	if id.Name != "hello" {
		return protocol.FetchResult{}, protocol.ErrNotFound(id, "the shelf has no %q", id.Name)
	}
	return protocol.FetchResult{ID: protocol.PackageID{PM: "shelf", Name: "hello", Version: "1.0.0"}, Root: p.root}, nil
}

// ListDeps makes the PM announce the list_deps capability.
func (p *shelfPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	return []protocol.PackageID{{PM: "shelf", Name: "hello", Version: "1.0.0"}}, nil
}

// A PM is a type implementing pmserver.PM; its binary's main function is
// just pmserver.Main(&shelfPM{}). Serve is the same loop on any streams.
func ExampleServe() {
	requests := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1,"workspace":"/ws","cache_dir":"/cache","env":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"list_deps"}`,
	}, "\n")
	err := pmserver.Serve(context.Background(), &shelfPM{}, strings.NewReader(requests), os.Stdout,
		pmserver.WithVersion("1.0.0"))
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"shelf","capabilities":["list_deps"],"version":"1.0.0"}}
	// {"jsonrpc":"2.0","id":2,"result":[{"pm":"shelf","name":"hello","version":"1.0.0"}]}
}

func ExampleMain() {
	// In package main of a PM binary:
	//
	//	func main() { pmserver.Main(&shelfPM{}) }
	//
	// Main parses --version and --help, keeps stdout for the protocol, serves
	// until stdin ends, and exits.
	_ = pmserver.Main
}
