package host_test

import (
	"context"
	"fmt"
	"log"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Start one PM, ask it for the workspace's dependencies, and shut it down.
// (Not run as a test: it needs symposium-pm-cargo on PATH.)
func ExampleStart() {
	ctx := context.Background()
	conn, err := host.Start(ctx, host.Spec{Name: "cargo", Command: "symposium-pm-cargo"},
		host.Options{Workspace: "/home/me/project", CacheDir: "/home/me/.symposium/cache"})
	if err != nil {
		log.Fatal(err) // names the PM, the cause and its last stderr lines
	}
	defer conn.Close() // stdin closed, then SIGTERM, then SIGKILL to the process group
	var deps []protocol.PackageID
	if err := conn.Call(ctx, protocol.MethodListDeps, struct{}{}, &deps); err != nil {
		log.Fatal(err)
	}
	for _, d := range deps {
		fmt.Println(d)
	}
}

// A registry starts each PM on first need; a failing PM becomes a warning
// and never hides the others' answers.
func ExampleRegistry() {
	ctx := context.Background()
	reg := host.NewRegistry(host.Options{Workspace: "/home/me/project", CacheDir: "/tmp/cache"},
		host.Spec{Name: "cargo", Command: "symposium-pm-cargo"},
		host.Spec{Name: "npm", Command: "symposium-pm-npm"})
	defer reg.Close()
	deps, warnings := reg.ListDeps(ctx)
	offers, more := reg.ActivePlugins(ctx, deps)
	for _, o := range offers {
		fmt.Println(o.PM, o.ID, o.Root)
	}
	for _, w := range append(warnings, more...) {
		log.Println("warning:", w)
	}
}
