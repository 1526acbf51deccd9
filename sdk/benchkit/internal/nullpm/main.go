// Command nullpm is the floor of a Go PM: the SDK harness answering
// initialize and an empty list_deps, with nothing else linked in.
package main

import (
	"context"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

type nullPM struct{}

func (nullPM) Name() string                                           { return "null" }
func (nullPM) Initialize(context.Context, *pmserver.Session) error    { return nil }
func (nullPM) ListDeps(context.Context) ([]protocol.PackageID, error) { return nil, nil }
func (nullPM) ActivePlugins(context.Context, []protocol.PackageID) ([]protocol.Offer, error) {
	return nil, nil
}
func (nullPM) LoadPlugin(context.Context, protocol.PackageID) ([]protocol.Offer, error) {
	return nil, nil
}
func (nullPM) Fetch(_ context.Context, id protocol.PackageID, _ protocol.UpdateLevel) (protocol.FetchResult, error) {
	return protocol.FetchResult{}, protocol.ErrNotFound(id, "the null PM has no packages")
}

func main() { pmserver.Main(nullPM{}) }
