package testscript

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/symposium-dev/symposium-pm/pm-cargo/cargopm"
	"github.com/symposium-dev/symposium-pm/pm-fixture/fixture"
	"github.com/symposium-dev/symposium-pm/pm-gitregistry/gitregistry"
	"github.com/symposium-dev/symposium-pm/pm-npm/npmpm"
	"github.com/symposium-dev/symposium-pm/pm-pypi/pypipm"
	"github.com/symposium-dev/symposium-pm/sdk/host/cli"
	"github.com/symposium-dev/symposium-pm/testscript/pmscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, pmscript.Commands(map[string]func(){
		"symposium-pm": func() { os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr)) },
		// The PMs, each through the Main its cmd/ binary calls.
		"symposium-pm-fixture":     func() { fixture.Main() },
		"symposium-pm-cargo":       func() { cargopm.Main() },
		"symposium-pm-npm":         func() { npmpm.Main() },
		"symposium-pm-pypi":        func() { pypipm.Main() },
		"symposium-pm-gitregistry": func() { gitregistry.Main() },
		// The Node.js PM of examples/pm-node, run by node from this checkout.
		"symposium-pm-node": func() {
			script := filepath.Join(os.Getenv("SYMPOSIUM_TEST_EXAMPLES"), "pm-node", "bin", "symposium-pm-node.js")
			node, err := exec.LookPath("node")
			if err == nil {
				err = syscall.Exec(node, append([]string{node, script}, os.Args[1:]...), os.Environ())
			}
			fmt.Fprintf(os.Stderr, "symposium-pm-node: running %s: %v\n", script, err)
			os.Exit(1)
		},
		// The Python PM of examples/pm-python, run by python3 from this checkout.
		"symposium-pm-python": func() {
			script := filepath.Join(os.Getenv("SYMPOSIUM_TEST_EXAMPLES"), "pm-python", "symposium-pm-python")
			// The interpreter TestScripts resolved: a version manager's shim
			// (pyenv's python3 is a shell script) started here, in the process
			// group the host gives a PM, may not pass stdin through.
			python, err := os.Getenv("SYMPOSIUM_TEST_PYTHON3"), error(nil)
			if python == "" {
				python, err = exec.LookPath("python3")
			}
			if err == nil {
				err = syscall.Exec(python, append([]string{python, script}, os.Args[1:]...), os.Environ())
			}
			fmt.Fprintf(os.Stderr, "symposium-pm-python: running %s: %v\n", script, err)
			os.Exit(1)
		},
	}))
}

func TestScripts(t *testing.T) {
	python := realPython3()
	examples, err := filepath.Abs(filepath.Join("..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata",
		RequireExplicitExec: true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup: func(env *testscript.Env) error {
			// The example PMs run from this checkout, found from the
			// package directory go test starts in (not from the source
			// path compiled in, which -trimpath removes).
			env.Setenv("SYMPOSIUM_TEST_EXAMPLES", examples)
			if python != "" {
				env.Setenv("SYMPOSIUM_TEST_PYTHON3", python)
			}
			// cargo installed through rustup is a proxy that finds its
			// toolchain under RUSTUP_HOME, by default in the real home,
			// which scripts do not see (their HOME is /no-home).
			if rh := rustupHome(); rh != "" {
				env.Setenv("RUSTUP_HOME", rh)
			}
			return nil
		},
	})
}

// realPython3 returns the interpreter python3 on PATH runs, as Python itself
// reports it (not a version manager's shim), or "" when there is none.
func realPython3() string {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// rustupHome returns the rustup directory this process would use
// (RUSTUP_HOME, else ~/.rustup when it exists), or "".
func rustupHome() string {
	if rh := os.Getenv("RUSTUP_HOME"); rh != "" {
		return rh
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	rh := filepath.Join(home, ".rustup")
	if _, err := os.Stat(rh); err != nil {
		return ""
	}
	return rh
}
