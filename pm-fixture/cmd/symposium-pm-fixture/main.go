// Command symposium-pm-fixture is a package manager for testing Symposium
// hosts: canned offers from a directory or txtar file, and deliberate
// misbehaviour on request (see --help).
package main

import "github.com/symposium-dev/symposium-pm/pm-fixture/fixture"

func main() { fixture.Main() }
