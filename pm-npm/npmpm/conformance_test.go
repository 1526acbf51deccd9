package npmpm

import (
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestConformance runs the SDK's conformance suite against the built binary
// in a workspace with an installed plugin, with the loopback registry
// configured so that search, load_plugin and fetch (update "check") really
// query, download, verify and unpack.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("pipes the protocol's 64 MiB line through the PM")
	}
	reg := fakeregistry.New()
	defer reg.Close()
	skill := map[string]string{"skills/s/SKILL.md": "---\nname: s\ndescription: a skill\n---\n"}
	reg.Publish(fakeregistry.Version{Name: "@acme/skilled", Version: "1.0.0", Description: "skilled package", Files: skill})
	reg.Publish(fakeregistry.Version{Name: "skillful", Version: "2.1.0", Description: "another skill package", Files: skill})
	// The binary TestMain puts on PATH: this test binary, run as
	// symposium-pm-npm, which calls Main as cmd/symposium-pm-npm does. No
	// build (a link of the whole PM) per test run.
	bin, err := exec.LookPath("symposium-pm-npm")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"@acme/skilled":"^1.0.0"}}`,
		"node_modules/@acme/skilled/package.json":      `{"name":"@acme/skilled","version":"1.0.0"}`,
		"node_modules/@acme/skilled/skills/s/SKILL.md": "---\nname: s\ndescription: a skill\n---\n",
	})
	pmtest.Run(t, []string{bin},
		pmtest.WithWorkspace(ws),
		pmtest.WithEnv("npm_config_registry", reg.URL()),
		pmtest.WithEnv("HOME", t.TempDir()),
		pmtest.WithEnv("npm_config_globalconfig", filepath.Join(t.TempDir(), "npmrc")),
		pmtest.WithFetchIDs(npmID("skillful", "^2"), npmID("@acme/skilled", "*")),
		pmtest.WithFetchUpdate(protocol.UpdateCheck))
}
