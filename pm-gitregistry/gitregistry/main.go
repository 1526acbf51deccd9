package gitregistry

import (
	"flag"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

// Main is the whole main function of symposium-pm-gitregistry: it registers
// the registry flags on flag.CommandLine and serves the PM on stdin and
// stdout until end of input.
func Main() {
	pm := New(Config{})
	pm.RegisterFlags(flag.CommandLine)
	defer pm.Close()
	pmserver.Main(pm, pmserver.WithDescription(
		"Serves the plugins and skills of a git-hosted Symposium registry, cloned into the cache with go-git.\n"+
			"Flags not given are read from the initialize env (SYMPOSIUM_GITREGISTRY_URL, _REF, _SUBDIR, _NO_AUTO_UPDATE)."))
}
