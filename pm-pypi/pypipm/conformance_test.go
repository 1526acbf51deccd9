package pypipm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestConformance runs the SDK's conformance suite against the built binary,
// with the loopback index configured so that load_plugin and fetch (update
// "check") really download, verify and unpack.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("pipes the protocol's 64 MiB line through the PM")
	}
	ix := demoIndex(t)
	// The binary TestMain puts on PATH: this test binary, run as
	// symposium-pm-pypi, which calls Main as cmd/symposium-pm-pypi does. No
	// build (a link of the whole PM) per test run.
	bin, err := exec.LookPath("symposium-pm-pypi")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "requirements.txt"), []byte("demo-plugin==1.0.0\nplain==0.5\n"), 0o644)
	pmtest.Run(t, []string{bin},
		pmtest.WithWorkspace(ws),
		pmtest.WithEnv("PIP_INDEX_URL", ix.URL),
		pmtest.WithEnv("PIP_CONFIG_FILE", os.DevNull),
		pmtest.WithEnv("VIRTUAL_ENV", ""),
		pmtest.WithFetchIDs(id("demo-plugin", "1.0.0"), id("skillful", "*")),
		pmtest.WithFetchUpdate(protocol.UpdateCheck))
}
