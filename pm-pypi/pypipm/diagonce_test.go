package pypipm

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// hookAllDiagnostics runs list_deps and active_plugins once, as the hook
// does, and returns the diagnostics of both.
func hookAllDiagnostics(t *testing.T, ws string) []protocol.Diagnostic {
	t.Helper()
	c, err := host.NewLocal(t.Context(), New(), host.Options{Workspace: ws, CacheDir: t.TempDir(), Env: testEnv(t, nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var deps []protocol.PackageID
	all, err := c.CallDiagnostics(t.Context(), protocol.MethodListDeps, struct{}{}, &deps)
	if err != nil {
		t.Fatal(err)
	}
	var offers []protocol.Offer
	diags, err := c.CallDiagnostics(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &offers)
	if err != nil {
		t.Fatal(err)
	}
	return append(all, diags...)
}

// editable returns the files of a distribution installed editable from
// the project directory proj.
func editable(name, proj string) map[string]string {
	di := cacheSite + name + "-1.0.dist-info/"
	return map[string]string{
		di + "METADATA":        "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n\n",
		di + "direct_url.json": `{"url": "file://` + filepath.ToSlash(proj) + `", "dir_info": {"editable": true}}`,
		di + "RECORD":          "__editable__." + name + "-1.0.pth,,\n",
		cacheSite + "__editable__." + name + "-1.0.pth": proj + "\n",
	}
}

// TestEachProblemOnce (issue 16, item 3): a file that does not parse is
// reported by one diagnostic, naming the file in its File and Line and not
// again in its message: a workspace member's pyproject.toml, which
// list_deps reports and active_plugins met again through the member's
// editable install; an editable project outside the workspace's members,
// which active_plugins alone reads; a distribution's entry_points.txt.
func TestEachProblemOnce(t *testing.T) {
	ws := t.TempDir()
	cacheProject(t, ws)
	files := map[string]string{
		"pyproject.toml":                                       "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"mem\", \"ext\", \"broken-ep\"]\n\n[tool.uv.workspace]\nmembers = [\"mem\"]\n",
		"mem/pyproject.toml":                                   "[project]\nname = \"mem\"\nversion = \"1.0\"\n\n[tool.symposium\nname = \"m\"\n",
		"ext/pyproject.toml":                                   "[project]\nname = \"ext\"\nversion = \"1.0\"\n\n[tool.symposium]\nname = \"e\"\nname = \"twice\"\n",
		cacheSite + "broken_ep-1.0.dist-info/METADATA":         "Metadata-Version: 2.1\nName: broken-ep\nVersion: 1.0\n\n",
		cacheSite + "broken_ep-1.0.dist-info/RECORD":           "broken_ep/__init__.py,,\n",
		cacheSite + "broken_ep-1.0.dist-info/entry_points.txt": "# entry points\n[symposium\nx = y\n",
		cacheSite + "broken_ep/__init__.py":                    "",
	}
	for k, v := range editable("mem", filepath.Join(ws, "mem")) {
		files[k] = v
	}
	for k, v := range editable("ext", filepath.Join(ws, "ext")) {
		files[k] = v
	}
	writeTree(t, ws, files)
	want := map[string]int{ // file → line
		filepath.Join(ws, "mem", "pyproject.toml"):                                  5,
		filepath.Join(ws, "ext", "pyproject.toml"):                                  7,
		filepath.Join(ws, cacheSite, "broken_ep-1.0.dist-info", "entry_points.txt"): 2,
	}
	seen := map[string]int{}
	for _, d := range hookAllDiagnostics(t, ws) {
		if _, ok := want[d.File]; !ok {
			continue
		}
		seen[d.File]++
		if d.Line != want[d.File] || strings.Contains(d.Message, filepath.Base(d.File)+":") || strings.Contains(d.Message, d.File) {
			t.Errorf("diagnostic %s:%d %q: want line %d, and a message that does not name the file again", d.File, d.Line, d.Message, want[d.File])
		}
	}
	for f := range want {
		if seen[f] != 1 {
			t.Errorf("%s is named by %d diagnostics, want 1", f, seen[f])
		}
	}
}
