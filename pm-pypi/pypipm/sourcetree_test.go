package pypipm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestSourceTreeReadAsAPackage: a path dependency's pyproject.toml is read
// as a package's files are (sdk/pkgfile). One that is a link out of the
// source tree, or over the manifest cap, is not read: its
// [tool.symposium] offers nothing, and a warning names the file and the
// cause, whether the tree's version comes from the file (a bare
// requirement) or from an exact pin.
func TestSourceTreeReadAsAPackage(t *testing.T) {
	const outsidePlugin = "[project]\nname = \"local\"\nversion = \"0.5\"\n\n[tool.symposium]\nname = \"outside-plugin\"\n"
	linkOut := func(t *testing.T, pp string) {
		out := filepath.Join(t.TempDir(), "pyproject.toml")
		writeTree(t, filepath.Dir(out), map[string]string{"pyproject.toml": outsidePlugin})
		if err := os.Symlink(out, pp); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		req   string
		plant func(t *testing.T, pp string)
		cause string
	}{
		{"link out, bare requirement", "local", linkOut, "a link leading out of the package"},
		{"link out, exact pin", "local==0.5", linkOut, "a link leading out of the package"},
		{"over the cap", "local", func(t *testing.T, pp string) {
			writeTree(t, filepath.Dir(pp), map[string]string{"pyproject.toml": outsidePlugin + "# " + strings.Repeat("x", 1<<20) + "\n"})
		}, "over the size cap"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			cacheProject(t, ws)
			writeTree(t, ws, map[string]string{"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"" + tc.req + "\"]\n\n[tool.uv.sources]\nlocal = { path = \"local\" }\n"})
			pp := filepath.Join(ws, "local", "pyproject.toml")
			if err := os.Remove(pp); err != nil {
				t.Fatal(err)
			}
			tc.plant(t, pp)
			res := pmtest.Hook{New: func() pmserver.PM { return New() },
				Deps:    []protocol.PackageID{pkgID("local", "0.5")},
				Options: host.Options{Workspace: ws, Env: testEnv(t, nil)}}.Run(t)
			for _, o := range res.Offers {
				if strings.Contains(string(o.Manifest), "outside-plugin") {
					t.Errorf("offered the plugin of a pyproject.toml it must not read: %s", o.Manifest)
				}
			}
			found := false
			for _, d := range res.Diagnostics {
				found = found || d.Level == protocol.LevelWarning && d.File == pp && strings.Contains(d.Message, tc.cause)
			}
			if !found {
				t.Errorf("no warning naming %s and %q: %+v", pp, tc.cause, res.Diagnostics)
			}
		})
	}
}

// TestPathDependencyDynamicVersion: a path dependency whose pyproject.toml
// leaves its version to the build backend (dynamic = ["version"], as with
// setuptools-scm) is listed at version "*", and its plugin is offered under
// that id: the hook asks active_plugins about what list_deps answered.
func TestPathDependencyDynamicVersion(t *testing.T) {
	ws := t.TempDir()
	writeTree(t, ws, map[string]string{
		"pyproject.toml":       "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"local\"]\n\n[tool.uv.sources]\nlocal = { path = \"local\" }\n",
		"local/pyproject.toml": "[project]\nname = \"local\"\ndynamic = [\"version\"]\n\n[tool.symposium]\nname = \"local-plugin\"\n",
	})
	res := pmtest.Hook{New: func() pmserver.PM { return New() },
		Options: host.Options{Workspace: ws, Env: testEnv(t, nil)}}.Run(t)
	if len(res.Deps) != 1 || res.Deps[0] != pkgID("local", "*") {
		t.Fatalf("list_deps = %v, want local *", res.Deps)
	}
	if len(res.Offers) != 1 || res.Offers[0].ID != pkgID("local", "*") || !strings.Contains(string(res.Offers[0].Manifest), "local-plugin") {
		t.Errorf("active_plugins offered %v (diagnostics %+v), want local-plugin as local *", pmtest.OfferSet(res.Offers), res.Diagnostics)
	}
}
