package pypipm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
)

// uvLockSplit locks numpy at two versions split by Python version, the way
// uv writes it (resolution-markers on the packages, versioned and marked
// references from the project).
const uvLockSplit = `version = 1
revision = 1
requires-python = ">=3.8"
resolution-markers = [
    "python_full_version >= '3.9'",
    "python_full_version < '3.9'",
]

[[package]]
name = "numpy"
version = "1.24.4"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.9'"]

[[package]]
name = "numpy"
version = "2.0.2"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.9'"]

[[package]]
name = "proj"
version = "0.1.0"
source = { virtual = "." }
dependencies = [
    { name = "numpy", version = "1.24.4", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.9'" },
    { name = "numpy", version = "2.0.2", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version >= '3.9'" },
]
`

// pylockSplit locks one name per platform, as PEP 751 entries with
// markers.
const pylockSplit = `lock-version = "1.0"
created-by = "hand"

[[packages]]
name = "plat"
version = "1.0"
marker = "sys_platform == 'linux'"

[[packages]]
name = "plat"
version = "2.0"
marker = "sys_platform == 'darwin'"

[[packages]]
name = "plat"
version = "3.0"
marker = "sys_platform == 'win32'"

[[packages]]
name = "plat"
version = "4.0"
marker = "sys_platform != 'linux' and sys_platform != 'darwin' and sys_platform != 'win32'"
`

// platVersion is the pylockSplit version for the running system.
func platVersion() string {
	switch runtime.GOOS {
	case "linux":
		return "1.0"
	case "darwin":
		return "2.0"
	case "windows":
		return "3.0"
	}
	return "4.0"
}

// splitWorkspace writes a project depending on numpy (uv.lock) and, in a
// second project, on plat (pylock.toml); venvPython, when set, adds a
// virtualenv of that Python version.
func splitWorkspace(t *testing.T, venvPython string) (uvWS, pylockWS string) {
	t.Helper()
	uvWS, pylockWS = t.TempDir(), t.TempDir()
	files := map[string]string{
		filepath.Join(uvWS, "pyproject.toml"):     "[project]\nname = \"proj\"\nversion = \"0.1.0\"\ndependencies = [\"numpy>=1.24\"]\n",
		filepath.Join(uvWS, "uv.lock"):            uvLockSplit,
		filepath.Join(pylockWS, "pyproject.toml"): "[project]\nname = \"proj\"\ndependencies = [\"plat\"]\n",
		filepath.Join(pylockWS, "pylock.toml"):    pylockSplit,
	}
	if venvPython != "" {
		for _, ws := range []string{uvWS, pylockWS} {
			mm := strings.Join(strings.Split(venvPython, ".")[:2], ".")
			files[filepath.Join(ws, ".venv", "pyvenv.cfg")] = "home = /usr/bin\nversion = " + venvPython + "\n"
			files[filepath.Join(ws, ".venv", "lib", "python"+mm, "site-packages", "README.txt")] = ""
		}
	}
	for p, body := range files {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return uvWS, pylockWS
}

func listDepsOf(t *testing.T, ws string, env map[string]string) string {
	t.Helper()
	p := newPM(t, ws, t.TempDir(), env)
	deps, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return render(deps)
}

// fakePython writes a python3 that prints a fixed marker environment.
func fakePython(t *testing.T, full, platform string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake python3 is a shell script")
	}
	dir := t.TempDir()
	mm := strings.Join(strings.Split(full, ".")[:2], ".")
	script := "#!/bin/sh\necho '{\"python_full_version\": \"" + full + "\", \"python_version\": \"" + mm + "\", \"sys_platform\": \"" + platform + "\", \"implementation_name\": \"cpython\"}'\n"
	if err := os.WriteFile(filepath.Join(dir, "python3"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLockMarkersVirtualenv: with a project virtualenv, its Python version
// (pyvenv.cfg) and the machine's platform select among locked versions.
func TestLockMarkersVirtualenv(t *testing.T) {
	for python, numpy := range map[string]string{"3.8.18": "1.24.4", "3.11.7": "2.0.2"} {
		uvWS, pylockWS := splitWorkspace(t, python)
		// A python3 on PATH that says otherwise is not asked.
		path := fakePython(t, "3.12.0", "other")
		if got := listDepsOf(t, uvWS, map[string]string{"PATH": path}); got != "numpy "+numpy+"\n" {
			t.Errorf("venv python %s: %q, want numpy %s", python, got, numpy)
		}
		if got := listDepsOf(t, pylockWS, map[string]string{"PATH": path}); got != "plat "+platVersion()+"\n" {
			t.Errorf("venv python %s: %q, want plat %s", python, got, platVersion())
		}
	}
}

// TestLockMarkersHostPython: without a virtualenv, the python3 on PATH
// says which version and platform.
func TestLockMarkersHostPython(t *testing.T) {
	uvWS, pylockWS := splitWorkspace(t, "")
	for _, tc := range []struct{ full, platform, numpy, plat string }{
		{"3.8.10", "darwin", "1.24.4", "2.0"},
		{"3.12.1", "win32", "2.0.2", "3.0"},
	} {
		path := fakePython(t, tc.full, tc.platform)
		if got := listDepsOf(t, uvWS, map[string]string{"PATH": path}); got != "numpy "+tc.numpy+"\n" {
			t.Errorf("python3 %s: %q, want numpy %s", tc.full, got, tc.numpy)
		}
		if got := listDepsOf(t, pylockWS, map[string]string{"PATH": path}); got != "plat "+tc.plat+"\n" {
			t.Errorf("python3 on %s: %q, want plat %s", tc.platform, got, tc.plat)
		}
	}
	// The real python3, when there is one.
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("no python3: the real interpreter case is skipped")
		return
	}
	out, err := exec.Command(py, "-I", "-S", "-c", "import sys; print(sys.version_info >= (3, 9))").Output()
	if err != nil {
		t.Fatalf("%s: %v", py, err)
	}
	want := "1.24.4"
	if strings.TrimSpace(string(out)) == "True" {
		want = "2.0.2"
	}
	if got := listDepsOf(t, uvWS, map[string]string{"PATH": filepath.Dir(py)}); got != "numpy "+want+"\n" {
		t.Errorf("real %s: %q, want numpy %s", py, got, want)
	}
}

// TestLockMarkersPlatformOnly: no virtualenv, no python3: markers on the
// Python version are undecided (the greatest is reported), the platform's
// still decide.
func TestLockMarkersPlatformOnly(t *testing.T) {
	uvWS, pylockWS := splitWorkspace(t, "")
	empty := map[string]string{"PATH": t.TempDir()}
	if got := listDepsOf(t, uvWS, empty); got != "numpy 2.0.2\n" {
		t.Errorf("uv.lock: %q", got)
	}
	if got := listDepsOf(t, pylockWS, empty); got != "plat "+platVersion()+"\n" {
		t.Errorf("pylock: %q, want plat %s", got, platVersion())
	}
}

func TestHostPlatformEnv(t *testing.T) {
	for _, tc := range []struct{ goos, goarch, platform, machine, system string }{
		{"linux", "amd64", "linux", "x86_64", "Linux"},
		{"darwin", "arm64", "darwin", "arm64", "Darwin"},
		{"windows", "amd64", "win32", "AMD64", "Windows"},
		{"plan9", "mips", "", "", ""},
	} {
		env := hostPlatformEnv(tc.goos, tc.goarch)
		if env["sys_platform"] != tc.platform || env["platform_machine"] != tc.machine || env["platform_system"] != tc.system {
			t.Errorf("%s/%s: %v", tc.goos, tc.goarch, env)
		}
	}
}

// TestListDepsSeesPythonAddedEarlierOnPath: without a virtualenv, list_deps
// evaluates lock markers with the first python3 on PATH. A python3 that
// becomes usable in a PATH directory before the one found (installed there,
// a pyenv shim, ~/.local/bin; or made executable), or in any PATH directory
// when none was found, changes the cold answer: the persisted answer
// records every candidate examined, so a warm list_deps agrees with a cold
// one.
func TestListDepsSeesPythonAddedEarlierOnPath(t *testing.T) {
	install := func(t *testing.T, dir, full string, mode os.FileMode) {
		data, err := os.ReadFile(filepath.Join(fakePython(t, full, "linux"), "python3"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "python3"), data, mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name        string
		later       bool // a python3 3.8.10 in a PATH directory after the early one
		setup       func(t *testing.T, early string)
		change      func(t *testing.T, early string)
		first, then string
	}{
		{"absent before the one found", true, nil, func(t *testing.T, early string) {
			install(t, early, "3.12.1", 0o755)
		}, "numpy 1.24.4\n", "numpy 2.0.2\n"},
		{"not executable before the one found", true, func(t *testing.T, early string) {
			install(t, early, "3.12.1", 0o644)
		}, func(t *testing.T, early string) {
			if err := os.Chmod(filepath.Join(early, "python3"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, "numpy 1.24.4\n", "numpy 2.0.2\n"},
		{"none found", false, nil, func(t *testing.T, early string) {
			install(t, early, "3.8.10", 0o755)
		}, "numpy 2.0.2\n", "numpy 1.24.4\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			uvWS, _ := splitWorkspace(t, "")
			early := t.TempDir()
			path := early
			if tc.later {
				path += string(os.PathListSeparator) + fakePython(t, "3.8.10", "linux")
			}
			if tc.setup != nil {
				tc.setup(t, early)
			}
			env := map[string]string{"PATH": path}
			cache := t.TempDir()
			ctx := context.Background()
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			first, err := newPM(t, uvWS, cache, env).ListDeps(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if render(first) != tc.first {
				t.Fatalf("first answer %q, want %q", render(first), tc.first)
			}
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			tc.change(t, early)
			cold, err := newPM(t, uvWS, t.TempDir(), env).ListDeps(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if render(cold) != tc.then {
				t.Fatalf("cold answer after the change %q, want %q", render(cold), tc.then)
			}
			warm, err := newPM(t, uvWS, cache, env).ListDeps(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if render(cold) != render(warm) {
				t.Errorf("cached list_deps %q, cold %q", render(warm), render(cold))
			}
		})
	}
}
