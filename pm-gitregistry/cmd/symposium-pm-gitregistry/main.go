// Command symposium-pm-gitregistry is the Symposium package manager for a
// plugin registry kept in a git repository. Symposium starts one process per
// configured registry:
//
//	symposium-pm-gitregistry --name NAME --url URL [--ref REF] [--subdir DIR] [--no-auto-update]
//
// and speaks the PM protocol with it on stdin and stdout.
package main

import (
	"flag"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/gitregistry"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

func main() {
	pm := gitregistry.New(gitregistry.Config{})
	pm.RegisterFlags(flag.CommandLine)
	pmserver.Main(pm, pmserver.WithDescription(
		"Serves the plugins and skills of a git-hosted Symposium registry, cloned into the cache with go-git."))
}
