package cargopm

import "github.com/symposium-dev/symposium-pm/sdk/pmserver"

// description is what --help says the PM does.
const description = "It lists a cargo workspace's dependencies from Cargo.toml and Cargo.lock, offers the plugins embedded in crates, and fetches crates through your cargo."

// Main is the whole main function of symposium-pm-cargo: it serves a new PM
// on stdin and stdout until end of input through pmserver.Main, which parses
// the command line (--version, --help, --max-message-size) and exits. opts
// are applied after the PM's own options, so they override them.
func Main(opts ...pmserver.Option) {
	pmserver.Main(New(), append([]pmserver.Option{pmserver.WithDescription(description)}, opts...)...)
}
