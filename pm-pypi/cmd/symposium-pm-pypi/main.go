// Command symposium-pm-pypi is Symposium's package manager for Python
// projects and PyPI-style indexes. It speaks the PM protocol (JSON-RPC 2.0,
// one message per line) on stdin and stdout; see the module README.
package main

import "github.com/symposium-dev/symposium-pm/pm-pypi/pypipm"

func main() { pypipm.Main() }
