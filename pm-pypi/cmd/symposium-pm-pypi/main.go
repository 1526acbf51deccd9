// Command symposium-pm-pypi is Symposium's package manager for Python
// projects and PyPI-style indexes. It speaks the PM protocol (JSON-RPC 2.0,
// one message per line) on stdin and stdout; see the module README.
package main

import (
	"github.com/symposium-dev/symposium-pm/pm-pypi/pypipm"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

func main() {
	pmserver.Main(pypipm.New(),
		pmserver.WithVersion(pypipm.Version),
		pmserver.WithDescription("Symposium package manager for Python: plugins embedded in PyPI distributions."))
}
