package pypipm

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// pipTool is the real pip the tests install with, run as `python3 -m pip
// --python venv/bin/python` runs it: pip re-executes itself, its runner
// script under the virtualenv's interpreter with _PIP_RUNNING_IN_SUBPROCESS
// set, and that second process does the work. Running the second process
// directly installs exactly the same, without the first: a Python start
// and pip's import, 0.6 s of CPU per pip command. The interpreter is the
// one python3 runs as Python itself reports it (sys.executable), not a
// version manager's shim on PATH: pyenv's python3 is a shell script that
// costs another 0.35 s of CPU per start.
type pipTool struct {
	python string // python3's interpreter, sys.executable
	runner string // pip's runner script, as pip --python finds it; "" runs python -m pip --python
}

// realPipTool finds the real pip once per test binary (findPip).
var realPipTool = sync.OnceValues(findPip)

// findPip asks python3 on PATH for its interpreter, its pip's version and
// the runner script `pip --python` executes (pip 22.3 and later). A pip
// whose internals no longer name the runner is run the documented way,
// `python3 -m pip --python`, only slower.
func findPip() (pipTool, error) {
	py, err := exec.LookPath("python3")
	if err != nil {
		return pipTool{}, fmt.Errorf("python3 not installed: %w", err)
	}
	const script = "import sys, pip\nprint(sys.executable)\nprint(pip.__version__)\n" +
		"try:\n    from pip._internal.build_env import get_runnable_pip\n    print(get_runnable_pip())\nexcept Exception:\n    print()\n"
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		return pipTool{}, fmt.Errorf("no pip under %s: %w", py, err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 3 {
		return pipTool{}, fmt.Errorf("python3 %s answered %q, not its interpreter, pip's version and pip's runner", py, out)
	}
	var major, minor int
	if _, err := fmt.Sscanf(lines[1], "%d.%d", &major, &minor); err != nil || major < 22 || major == 22 && minor < 3 {
		return pipTool{}, fmt.Errorf("pip %s under %s has no --python (pip 22.3 and later)", lines[1], py)
	}
	return pipTool{python: lines[0], runner: lines[2]}, nil
}

// venv creates a virtualenv without pip at dir with python3's interpreter.
func (p pipTool) venv(dir string) *exec.Cmd {
	return exec.Command(p.python, "-m", "venv", "--without-pip", dir)
}

// pip returns the command `python3 -m pip --python <venv>/bin/python args`
// runs to do its work in the virtualenv venvDir: pip's runner under the
// virtualenv's interpreter, told it already runs there, or without a
// runner that command itself.
func (p pipTool) pip(venvDir string, args ...string) *exec.Cmd {
	venvPython := filepath.Join(venvDir, "bin", "python")
	if p.runner == "" {
		return exec.Command(p.python, append([]string{"-m", "pip", "--python", venvPython}, args...)...)
	}
	cmd := exec.Command(venvPython, append([]string{p.runner, "--python", venvPython}, args...)...)
	cmd.Env = append(os.Environ(), "_PIP_RUNNING_IN_SUBPROCESS=1")
	return cmd
}

// realPip returns the real pip (pipTool); it skips the test without one,
// and with -short.
func realPip(t *testing.T) pipTool {
	t.Helper()
	if testing.Short() {
		t.Skip("runs pip several times: -short skips it")
	}
	p, err := realPipTool()
	if err != nil {
		t.Skip(err)
	}
	return p
}

// runCmd runs cmd with env added to its environment (the process's when
// cmd sets none), failing t on an error.
func runCmd(t *testing.T, cmd *exec.Cmd, env ...string) {
	t.Helper()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
}

// TestRealPipInstallRecord proves, with pip itself, that the stamp of
// site-packages records what pip does to a virtualenv: each install,
// forced reinstall (the same version, so the same cache key) and uninstall
// of a local wheel is seen by the next hook, which computes its answer
// again and answers what a PM without a cache answers. The steps where the
// answer had no plugin root before (so no root's stamp can see the change)
// prove the record alone.
func TestRealPipInstallRecord(t *testing.T) {
	t.Parallel()
	pt := realPip(t)
	ws := t.TempDir()
	venvDir := filepath.Join(ws, ".venv")
	// Offline and without the user's pip configuration.
	offline := []string{"PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_CONFIG_FILE=" + os.DevNull,
		"PIP_NO_CACHE_DIR=1", "PIP_NO_INDEX=1", "HOME=" + t.TempDir()}
	runCmd(t, pt.venv(venvDir), offline...)
	writeTree(t, ws, map[string]string{"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"demo-plugin\"]\n"})
	wheels := t.TempDir()
	pip := func(args ...string) {
		t.Helper()
		runCmd(t, pt.pip(venvDir, args...), offline...)
		time.Sleep(depcache.RacyWindow + 20*time.Millisecond) // for the next answer to be persisted
	}
	// install builds demo-plugin at version with a SYMPOSIUM.toml naming
	// the plugin plugin ("" for none) and pip installs it (args: --force-reinstall).
	install := func(version, plugin string, args ...string) {
		t.Helper()
		files := map[string]string{"demo_plugin/__init__.py": ""}
		if plugin != "" {
			files["demo_plugin/SYMPOSIUM.toml"] = "name = \"" + plugin + "\"\n"
		}
		whl := filepath.Join(wheels, "demo_plugin-"+version+"-py3-none-any.whl")
		if err := os.WriteFile(whl, fakeindex.BuildWheel(fakeindex.Package{Name: "demo-plugin", Version: version, Files: files}), 0o644); err != nil {
			t.Fatal(err)
		}
		pip(append(append([]string{"install", "--no-deps"}, args...), whl)...)
	}
	var computed atomic.Int32
	env := testEnv(t, nil)
	// The requests stay the same throughout: only the record can tell the
	// cached answer is stale.
	deps := []protocol.PackageID{pkgID("demo-plugin", "1.0.0")}
	hook := func(cache string) pmtest.Hook {
		return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), &computed} }, Deps: deps,
			Options: host.Options{Workspace: ws, CacheDir: cache, Env: env}}
	}
	cached, fresh := hook(t.TempDir()), hook("")
	// check runs the cached hook, which must compute (want 1) or be served
	// encoded (want 0), and offer the plugins named wantNames, as a PM
	// without a cache does.
	check := func(step string, wantComputed int32, wantNames ...string) {
		t.Helper()
		computed.Store(0)
		got := cached.Run(t).Offers
		if n := computed.Load(); n != wantComputed {
			t.Errorf("%s: the cached hook computed %d answers, want %d", step, n, wantComputed)
		}
		var names []string
		for _, o := range got {
			var m struct{ Name string }
			if err := json.Unmarshal(o.Manifest, &m); err != nil {
				t.Fatalf("%s: offer %v: %v", step, o.ID, err)
			}
			names = append(names, m.Name)
		}
		if strings.Join(names, " ") != strings.Join(wantNames, " ") {
			t.Errorf("%s: the cached hook offered %q, want %q", step, names, wantNames)
		}
		pmtest.CheckInvalidation(t, false, nil, got, fresh.Run(t).Offers)
	}

	install("1.0.0", "")
	check("installed without a plugin", 1)
	check("nothing changed", 0)
	install("1.0.0", "first", "--force-reinstall")
	check("reinstalled with a SYMPOSIUM.toml", 1, "first")
	pip("uninstall", "--yes", "demo-plugin")
	check("uninstalled", 1)
	install("2.0.0", "third")
	check("installed at another version", 1, "third")
}
