package pypipm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/benchkit"
)

// benchPython returns the Python interpreter the benchmarks run pip with,
// resolved to the interpreter itself (sys.executable) rather than the
// python3 found on PATH, which may be a version manager's shim: pyenv's
// shim is a shell script that costs about half a second of CPU per start,
// as much as pip list itself on a small virtualenv, and a user running pip
// in an activated virtualenv does not go through it. It returns false (logged)
// when there is no python3 with pip.
func benchPython(b *testing.B) (string, bool) {
	b.Helper()
	py, err := exec.LookPath("python3")
	var out []byte
	if err == nil {
		out, err = exec.Command(py, "-c", "import sys, pip; print(sys.executable)").Output()
	}
	exe := strings.TrimSpace(string(out))
	if err == nil && !filepath.IsAbs(exe) {
		err = &exec.Error{Name: "python3", Err: exec.ErrNotFound}
	}
	if err != nil {
		b.Logf("no python3 with pip (%v): measuring without pip list", err)
		return "", false
	}
	return exe, true
}

// pipListCmd is `pip list --format=json` over the distributions installed
// in site, run by py in an environment of its own: no configuration file,
// no index, no version check, no cache, home as HOME, and proxies pointing
// at a closed loopback port, so that it cannot reach the network.
func pipListCmd(py, site, home string) *exec.Cmd {
	cmd := exec.Command(py, "-m", "pip", "list", "--format=json", "--path", site, "--disable-pip-version-check")
	cmd.Env = []string{
		"PATH=/usr/bin:/bin", "HOME=" + home, "LANG=C.UTF-8",
		"PIP_CONFIG_FILE=" + os.DevNull, "PIP_NO_INDEX=1", "PIP_DISABLE_PIP_VERSION_CHECK=1",
		"PIP_NO_INPUT=1", "PIP_NO_CACHE_DIR=1",
	}
	cmd.Env = append(cmd.Env, benchkit.ClosedProxies()...)
	return cmd
}

// pipListVariant returns the ecosystem tool's variant, named "pip-list" as
// the bench report expects: pip list (pipListCmd, with an empty HOME) in
// dir over site, in the first rounds rounds only, each run checked,
// outside its timing, to list want distributions. It checks one run before returning, so that a
// benchmark whose virtualenv pip cannot read fails before it times
// anything.
func pipListVariant(b *testing.B, py, dir, site string, want, rounds int) benchkit.Variant {
	b.Helper()
	home := b.TempDir()
	run := func() benchkit.Hook {
		h := benchkit.RunCmd(b, pipListCmd(py, site, home), dir)
		if got := strings.Count(string(h.Out), `"name"`); got != want {
			b.Fatalf("pip list over %s listed %d distributions, want %d:\n%.2000s", site, got, want, h.Out)
		}
		return h
	}
	run()
	return benchkit.Variant{Name: "pip-list", Rounds: rounds, Run: run}
}
