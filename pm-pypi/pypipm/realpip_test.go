package pypipm

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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

// realPip returns a python3 whose pip can install into another
// interpreter's environment (pip --python, pip 22.3 and later); it skips
// the test without one, and with -short.
func realPip(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs pip several times: -short skips it")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	if out, err := exec.Command(py, "-m", "pip", "--help").Output(); err != nil || !strings.Contains(string(out), "--python") {
		t.Skipf("no pip with --python under %s: %v", py, err)
	}
	return py
}

// runPython runs py with args, offline and without the user's pip
// configuration, failing t on an error.
func runPython(t *testing.T, py string, args ...string) {
	t.Helper()
	cmd := exec.Command(py, args...)
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_CONFIG_FILE="+os.DevNull,
		"PIP_NO_CACHE_DIR=1", "PIP_NO_INDEX=1", "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", py, strings.Join(args, " "), err, out)
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
	py := realPip(t)
	ws := t.TempDir()
	venvDir := filepath.Join(ws, ".venv")
	runPython(t, py, "-m", "venv", "--without-pip", venvDir)
	writeTree(t, ws, map[string]string{"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"demo-plugin\"]\n"})
	wheels := t.TempDir()
	pip := func(args ...string) {
		t.Helper()
		runPython(t, py, append([]string{"-m", "pip", "--python", filepath.Join(venvDir, "bin", "python")}, args...)...)
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
