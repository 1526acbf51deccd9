// Command symposium-pm-cargo is Symposium's package manager for Rust crates.
// It speaks the PM protocol (newline-delimited JSON-RPC 2.0) on stdin and
// stdout; Symposium starts it in a cargo workspace.
package main

import (
	"github.com/symposium-dev/symposium-pm/pm-cargo/cargopm"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
)

func main() {
	pmserver.Main(cargopm.New(), pmserver.WithDescription("It lists a cargo workspace's dependencies from Cargo.toml and Cargo.lock, offers the plugins embedded in crates, and fetches crates through your cargo."))
}
