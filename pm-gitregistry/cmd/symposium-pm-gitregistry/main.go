// Command symposium-pm-gitregistry is the Symposium package manager for a
// plugin registry kept in a git repository. Symposium starts one process per
// configured registry:
//
//	symposium-pm-gitregistry --name NAME --url URL [--ref REF] [--subdir DIR] [--no-auto-update]
//
// and speaks the PM protocol with it on stdin and stdout.
package main

import "github.com/symposium-dev/symposium-pm/pm-gitregistry/gitregistry"

func main() { gitregistry.Main() }
