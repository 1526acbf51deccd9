package cargopm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargopm"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/host/cli"
	"github.com/symposium-dev/symposium-pm/testscript/pmscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, pmscript.Commands(map[string]func(){
		"symposium-pm-cargo": func() { cargopm.Main() },
		"symposium-pm":       func() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
	}))
}

// scriptCrates is what the fake registry publishes for the scenarios.
var scriptCrates = []fakeregistry.Crate{
	{Name: "skilled", Version: "1.0.0", Description: "A crate with skills", Files: map[string]string{"skills/rust/SKILL.md": "---\nname: rust\ndescription: Rust help\n---\nBody\n"}},
	{Name: "skilled", Version: "1.1.0", Description: "A crate with skills", Files: map[string]string{"skills/rust/SKILL.md": "---\nname: rust\ndescription: Rust help\n---\nBody\n"}},
	{Name: "skilled", Version: "1.2.0", Yanked: true},
	{Name: "skilled", Version: "2.0.0-beta.1"},
	{Name: "plain", Version: "0.4.2", Description: "No plugin"},
}

const registryKey = "fakeregistry"

// TestScripts runs testdata/script/*.txtar against the binary (cargopm.Main). Each scenario gets
// a fresh loopback registry ($REGISTRY), a CARGO_HOME ($WORK/cargo-home,
// merged with any files the archive puts there) whose config replaces
// crates-io with it, and $CARGO when cargo is installed.
func TestScripts(t *testing.T) {
	cargo, _ := exec.LookPath("cargo")
	home, _ := os.UserHomeDir()
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			reg, err := fakeregistry.New(scriptCrates...)
			if err != nil {
				return err
			}
			env.Defer(reg.Close)
			env.Values[registryKey] = reg
			cargoHome := filepath.Join(env.WorkDir, "cargo-home")
			if err := reg.WriteCargoConfig(cargoHome); err != nil {
				return err
			}
			env.Setenv("CARGO_HOME", cargoHome)
			env.Setenv("REGISTRY", reg.URL())
			env.Setenv("CARGO", cargo)
			rustup := os.Getenv("RUSTUP_HOME")
			if rustup == "" && home != "" {
				rustup = filepath.Join(home, ".rustup")
			}
			env.Setenv("RUSTUP_HOME", rustup)
			env.Setenv("CARGO_TERM_COLOR", "never")
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			// registry down|up: make the fake registry fail every request, or not.
			"registry": func(ts *testscript.TestScript, neg bool, args []string) {
				if neg || len(args) != 1 || (args[0] != "down" && args[0] != "up") {
					ts.Fatalf("usage: registry down|up")
				}
				ts.Value(registryKey).(*fakeregistry.Registry).SetDown(args[0] == "down")
			},
		},
		Condition: func(cond string) (bool, error) {
			if cond == "cargo" {
				return cargo != "", nil
			}
			return false, nil
		},
	})
}
