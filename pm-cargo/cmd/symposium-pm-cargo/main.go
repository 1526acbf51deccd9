// Command symposium-pm-cargo is Symposium's package manager for Rust crates.
// It speaks the PM protocol (newline-delimited JSON-RPC 2.0) on stdin and
// stdout; Symposium starts it in a cargo workspace.
package main

import "github.com/symposium-dev/symposium-pm/pm-cargo/cargopm"

func main() { cargopm.Main() }
