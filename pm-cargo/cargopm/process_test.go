package cargopm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// pmBinaryOnce builds the PM binary once per test process.
var pmBinaryOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "symposium-pm-cargo-test-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "symposium-pm-cargo")
	cmd := exec.Command("go", "build", "-o", out, "github.com/symposium-dev/symposium-pm/pm-cargo/cmd/symposium-pm-cargo")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
})

func pmBinary(t testing.TB) string {
	t.Helper()
	bin, err := pmBinaryOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// startPM starts the binary with exactly the process environment procEnv and
// sends initialize with initEnv.
func startPM(t testing.TB, procEnv []string, workspace, cacheDir string, initEnv map[string]string) *pmtest.Proc {
	t.Helper()
	return pmtest.StartProc(t, pmBinary(t), nil, workspace, cacheDir, initEnv, pmtest.ProcEnv(procEnv...))
}

func pkgParams(name, version, update string) map[string]any {
	m := map[string]any{"id": map[string]string{"pm": Name, "name": name, "version": version}}
	if update != "" {
		m["update"] = update
	}
	return m
}
