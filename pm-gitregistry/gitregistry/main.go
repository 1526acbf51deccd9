package gitregistry

import (
	"flag"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

// example is what --help suggests to try the PM by hand: a registry has no
// dependencies to list, and is empty until refreshed.
const example = `symposium-pm call refresh '{"update":"check","force":true}' -- symposium-pm-gitregistry --name recs --url https://github.com/symposium-dev/recommendations` +
	"` to fetch a registry, then `" +
	`symposium-pm call active_plugins '{"deps":[]}' -- symposium-pm-gitregistry --name recs --url https://github.com/symposium-dev/recommendations`

// description is what --help says the PM does. The harness's text below it
// names the PM by Name, which before initialize is --name, else the
// process's SYMPOSIUM_GITREGISTRY_NAME, else "gitregistry".
const description = "Serves the plugins and skills of a git-hosted Symposium registry, cloned into the cache with go-git.\n" +
	"In initialize it announces the registry's name (--name) as its own, the pm of every id it offers (\"gitregistry\" below when no name is given).\n" +
	"Flags not given are read from the initialize env, then the process environment (SYMPOSIUM_GITREGISTRY_NAME, _URL, _REF, _SUBDIR, _NO_AUTO_UPDATE)."

// Main is the whole main function of symposium-pm-gitregistry: it registers
// the registry flags on flag.CommandLine and serves a new PM on stdin and
// stdout until end of input through pmserver.Main, which parses the command
// line (those flags, --version, --help, --max-message-size) and exits. opts
// are applied after the PM's own options, so they override them. It sets
// the process's garbage collection policy first (gcpolicy.go).
func Main(opts ...pmserver.Option) {
	setGCPolicy()
	pm := New(Config{})
	pm.RegisterFlags(flag.CommandLine)
	defer pm.Close()
	pmserver.Main(pm, append([]pmserver.Option{pmserver.WithExample(example), pmserver.WithDescription(description)}, opts...)...)
}
