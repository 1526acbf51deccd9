package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// realVenv creates a virtualenv with the real python3 -m venv and installs
// packages into it with the real pip (pipTool) from the fake index, so the
// dist-info layout active_plugins reads is pip's own.
func realVenv(t *testing.T, dir, indexURL string, pkgs ...string) string {
	t.Helper()
	pt, err := realPipTool()
	if err != nil {
		t.Skip(err)
	}
	venvDir := filepath.Join(dir, ".venv")
	env := []string{"PIP_CONFIG_FILE=" + os.DevNull, "PIP_DISABLE_PIP_VERSION_CHECK=1", "PIP_NO_CACHE_DIR=1", "PIP_FIND_LINKS="}
	runCmd(t, pt.venv(venvDir), env...)
	runCmd(t, pt.pip(venvDir, append([]string{"install", "--no-deps", "--index-url", indexURL}, pkgs...)...), env...)
	sites, _ := filepath.Glob(filepath.Join(venvDir, "lib", "python*", "site-packages"))
	if len(sites) != 1 {
		t.Fatalf("site-packages: %v", sites)
	}
	return sites[0]
}

func TestActivePluginsRealVenv(t *testing.T) {
	t.Parallel()
	ix := demoIndex(t)
	ws := t.TempDir()
	site := realVenv(t, ws, ix.URL, "demo-plugin", "plain", "skillful")

	// An editable install of a local source tree, as pip and setuptools
	// record one (PEP 610 direct_url.json, a .pth file naming the project);
	// fabricated by fakeEditable because building editables needs
	// setuptools' wheel support, which this machine lacks offline.
	src := filepath.Join(ws, "localsrc")
	os.MkdirAll(filepath.Join(src, "localpkg"), 0o755)
	os.WriteFile(filepath.Join(src, "pyproject.toml"), []byte("[project]\nname = \"local-pkg\"\nversion = \"0.3.0\"\n\n[tool.symposium]\nname = \"local-plugin\"\n\n[[tool.symposium.skills]]\nsource.path = \"notes\"\n"), 0o644)
	fakeEditable(t, site, "local-pkg", "0.3.0", src)

	os.WriteFile(filepath.Join(ws, "pyproject.toml"), []byte("[project]\nname = \"ws\"\ndependencies = [\"Demo.Plugin\", \"plain\", \"skillful\", \"local-pkg\", \"absent\"]\n"), 0o644)
	p := newPM(t, ws, t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL})
	ctx := context.Background()
	deps, err := p.ListDeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := render(deps); got != "absent *\ndemo-plugin 1.0.0\nlocal-pkg 0.3.0\nplain 0.5\nskillful 3.0\n" {
		t.Errorf("list_deps from the real virtualenv:\n%s", got)
	}
	n := ix.Requests()
	deps = append(deps, protocol.PackageID{PM: "npm", Name: "left-pad", Version: "1.0.0"})
	offers, err := p.ActivePlugins(ctx, deps)
	if err != nil {
		t.Fatal(err)
	}
	if ix.Requests() != n {
		t.Error("active_plugins used the network")
	}
	if len(offers) != 2 {
		t.Fatalf("offers: %+v", offers)
	}
	byName := map[string]protocol.Offer{}
	for _, o := range offers {
		byName[o.ID.Name] = o
	}
	demo := byName["demo-plugin"]
	if demo.ID.Version != "1.0.0" || demo.Root != filepath.Join(site, "demo_plugin") {
		t.Errorf("demo offer %+v", demo)
	}
	if m := manifestOf(t, demo); m["name"] != "demo-plugin" || len(m["skills"].([]any)) != 2 {
		t.Errorf("demo manifest %v", m)
	}
	local := byName["local-pkg"]
	if local.Root != src || manifestOf(t, local)["name"] != "local-plugin" {
		t.Errorf("local offer %+v %s", local, local.Manifest)
	}
	// fetch with update none serves the installed copy.
	res, err := p.Fetch(ctx, id("demo-plugin", "1.0.0"), protocol.UpdateNone)
	if err != nil || res.Root != site {
		t.Errorf("fetch none of installed: %+v %v", res, err)
	}
	// A version the venv does not hold and the cache does not either: the
	// installed one is what runs, so it is offered.
	offers, _ = p.ActivePlugins(ctx, []protocol.PackageID{id("demo-plugin", "9.9")})
	if len(offers) != 1 || offers[0].ID.Version != "1.0.0" {
		t.Errorf("version mismatch: %+v", offers)
	}
}

// fakeEditable lays out an editable install of the project at src into
// site as pip with setuptools (PEP 660) writes it: a dist-info with
// METADATA, direct_url.json (dir_info.editable) and a RECORD listing an
// __editable__ .pth file that names the project directory.
func fakeEditable(t *testing.T, site, name, version, src string) {
	t.Helper()
	esc := strings.ReplaceAll(name, "-", "_")
	di := filepath.Join(site, esc+"-"+version+".dist-info")
	pth := "__editable__." + esc + "-" + version + ".pth"
	files := map[string]string{
		filepath.Join(di, "METADATA"):        "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n",
		filepath.Join(di, "direct_url.json"): `{"url": "file://` + filepath.ToSlash(src) + `", "dir_info": {"editable": true}}`,
		filepath.Join(di, "RECORD"):          pth + ",,\n" + filepath.Base(di) + "/METADATA,,\n" + filepath.Base(di) + "/RECORD,,\n",
		filepath.Join(site, pth):             src + "\n",
	}
	os.MkdirAll(di, 0o755)
	for p, body := range files {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
