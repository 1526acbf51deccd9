package npmpm

import "github.com/symposium-dev/symposium-pm/sdk/pmserver"

// description is what --help says the PM does.
const description = "It lists a JavaScript project's dependencies from package.json and its lockfiles, offers the plugins its installed packages embed, and fetches packages from the registry your .npmrc files and npm_config_* variables name."

// Main is the whole main function of symposium-pm-npm: it serves a new PM on
// stdin and stdout until end of input through pmserver.Main, which parses
// the command line (--version, --help, --max-message-size) and exits. opts
// are applied after the PM's own options, so they override them.
func Main(opts ...pmserver.Option) {
	pmserver.Main(New(), append([]pmserver.Option{pmserver.WithVersion(Version), pmserver.WithDescription(description)}, opts...)...)
}
