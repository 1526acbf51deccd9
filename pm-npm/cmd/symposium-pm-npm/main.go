// Command symposium-pm-npm is Symposium's package manager for npm: it lists
// a JavaScript project's dependencies from its lockfiles, offers the plugins
// its installed packages embed, and fetches packages from the configured npm
// registry. It speaks Symposium's PM protocol (JSON-RPC 2.0, one message per
// line) on stdin and stdout and is started by Symposium.
package main

import "github.com/symposium-dev/symposium-pm/pm-npm/npmpm"

func main() { npmpm.Main() }
