// Command symposium-pm is the host-side tool for Symposium package managers:
// it spawns PMs the way Symposium does, calls them, discovers and validates
// their plugins, and checks PMs for conformance. Run it without arguments for
// the list of commands.
package main

import (
	"os"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/cli"
)

func main() {
	host.TuneGC()
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
