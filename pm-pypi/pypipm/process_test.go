package pypipm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// baseProcEnv is a process environment with nothing of the machine's
// index configuration: PATH, a private HOME and debug logging.
func baseProcEnv(t testing.TB, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SYMPOSIUM_LOG=debug",
		"PIP_CONFIG_FILE=" + os.DevNull}, extra...)
}

// startPM starts the real symposium-pm-pypi (the test binary's copy that
// testscript.Main put on PATH) with exactly the process environment procEnv
// and sends initialize with initEnv.
func startPM(t testing.TB, procEnv []string, ws, cacheDir string, initEnv map[string]string) *pmtest.Proc {
	t.Helper()
	bin, err := exec.LookPath("symposium-pm-pypi")
	if err != nil {
		t.Fatalf("the PM binary is not on PATH (testscript.Main): %v", err)
	}
	return pmtest.StartProc(t, bin, nil, ws, cacheDir, initEnv, pmtest.ProcEnv(procEnv...))
}

func fetchParams(name, version, update string) map[string]any {
	return map[string]any{"id": map[string]string{"pm": Name, "name": name, "version": version}, "update": update}
}

// treeOf lists every path under dir (slash-separated, relative), with "/"
// after directories.
func treeOf(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	return out
}

// onlyDirs reports the paths of tree that are not directories.
func onlyDirs(tree []string) []string {
	var files []string
	for _, p := range tree {
		if !strings.HasSuffix(p, "/") {
			files = append(files, p)
		}
	}
	return files
}
