package pypipm

import "github.com/symposium-dev/symposium-pm/sdk/pmserver"

// description is what --help says the PM does.
const description = "Symposium package manager for Python projects and PyPI-style indexes.\n" +
	"The index comes from the initialize env: PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, pip.conf, UV_INDEX_URL.\n" +
	"Proxies as pip's: PIP_PROXY, pip.conf proxy, else HTTP(S)_PROXY, ALL_PROXY, NO_PROXY (either case)."

// Main is the whole main function of symposium-pm-pypi: it serves a new PM
// on stdin and stdout until end of input through pmserver.Main, which parses
// the command line (--version, --help, --max-message-size) and exits. opts
// are applied after the PM's own options, so they override them.
func Main(opts ...pmserver.Option) {
	pmserver.Main(New(), append([]pmserver.Option{pmserver.WithVersion(Version), pmserver.WithDescription(description)}, opts...)...)
}
