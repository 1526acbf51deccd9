package fakeindex

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// pip returns a python3 with pip, for the tests that prove the fake against
// pip itself; it skips them without one, and with -short.
func pip(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("an oracle test that runs pip against the fake index for minutes: make test (TestRealPip) and make oracle run it; -short (make race) skips it")
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed")
	}
	if err := exec.Command(py, "-m", "pip", "--version").Run(); err != nil {
		t.Skip("pip not installed")
	}
	return py
}

func runPip(t *testing.T, py string, args ...string) string {
	t.Helper()
	cmd := exec.Command(py, append([]string{"-m", "pip"}, args...)...)
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_INPUT=1", "PIP_CONFIG_FILE=/dev/null",
		"PIP_NO_CACHE_DIR=1", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("pip %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func listDir(t *testing.T, dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// TestRealPip proves the fake speaks the real protocol: pip installs from
// it over JSON (verifying the hash and skipping the yanked release), and
// downloads over HTML honouring a pin on the yanked release. (pip is slow to
// start, so each run proves several things.)
func TestRealPip(t *testing.T) {
	t.Parallel()
	py := pip(t)
	ix := Start(
		Package{Name: "Demo_Plugin", Version: "1.0.0", Summary: "A demo", Files: map[string]string{
			"demo_plugin/__init__.py": "", "demo_plugin/skills/hello/SKILL.md": "---\nname: hello\ndescription: hi\n---\n"},
			EntryPoints: "[symposium]\ndemo = demo_plugin\n"},
		Package{Name: "Demo_Plugin", Version: "1.1.0", Yanked: "broken", Files: map[string]string{"demo_plugin/__init__.py": ""}},
		Package{Name: "other", Version: "0.1", Sdist: true, Files: map[string]string{"setup.py": "raise SystemExit('never built')\n"}},
	)
	defer ix.Close()

	// JSON API: install --target picks 1.0.0 (1.1.0 is yanked).
	target := t.TempDir()
	runPip(t, py, "install", "--index-url", ix.URL, "--no-deps", "--target", target, "demo-plugin")
	if _, err := os.Stat(filepath.Join(target, "demo_plugin", "skills", "hello", "SKILL.md")); err != nil {
		t.Errorf("pip install --target: %v", err)
	}
	ep, err := os.ReadFile(filepath.Join(target, "demo_plugin-1.0.0.dist-info", "entry_points.txt"))
	if err != nil || !strings.Contains(string(ep), "[symposium]") {
		t.Errorf("entry_points.txt %q %v (yanked 1.1.0 must be skipped)", ep, err)
	}

	// HTML API: a pin on the yanked release downloads it.
	ix.HTMLOnly.Store(true)
	dl := t.TempDir()
	runPip(t, py, "download", "--index-url", ix.URL, "--no-deps", "-d", dl, "demo-plugin==1.1.0")
	if got := listDir(t, dl); len(got) != 1 || got[0] != "demo_plugin-1.1.0-py3-none-any.whl" {
		t.Errorf("pinned yanked download over HTML got %v", got)
	}
}

// TestOracleRealPipRejectsWrongHash shows the advertised hash is what pip checks.
func TestOracleRealPipRejectsWrongHash(t *testing.T) {
	t.Parallel()
	py := pip(t)
	ix := Start(Package{Name: "tampered", Version: "1.0", WrongHash: true, Files: map[string]string{"tampered/__init__.py": ""}})
	defer ix.Close()
	cmd := exec.Command(py, "-m", "pip", "download", "--index-url", ix.URL, "--no-deps", "-d", t.TempDir(), "tampered")
	cmd.Env = append(os.Environ(), "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_CONFIG_FILE=/dev/null", "PIP_NO_CACHE_DIR=1")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "HASH") {
		t.Errorf("pip accepted a wrong hash: %v\n%s", err, out)
	}
}
