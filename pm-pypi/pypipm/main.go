package pypipm

import "github.com/symposium-dev/symposium-pm/sdk/pmserver"

// Main is the whole main function of symposium-pm-pypi: it serves the PM on
// stdin and stdout until end of input.
func Main() {
	pmserver.Main(New(),
		pmserver.WithVersion(Version),
		pmserver.WithDescription("Symposium package manager for Python projects and PyPI-style indexes.\n"+
			"The index comes from the initialize env: PIP_INDEX_URL, PIP_EXTRA_INDEX_URL, pip.conf, UV_INDEX_URL."))
}
