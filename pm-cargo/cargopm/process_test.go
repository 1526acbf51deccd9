package cargopm

import (
	"os/exec"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// pmBinary returns the PM binary TestMain puts on PATH: this test binary,
// run as symposium-pm-cargo, which calls Main as cmd/symposium-pm-cargo
// does. No build (a link of the whole PM) per test run.
func pmBinary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("symposium-pm-cargo")
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
