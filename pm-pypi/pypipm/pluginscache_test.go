package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

const cacheSite = ".venv/lib/python3.12/site-packages/"

// cacheProject writes a project with a virtualenv holding three
// distributions (one declaring an entry point, one with SYMPOSIUM.toml in
// its package, one plain) and a path dependency with [tool.symposium].
func cacheProject(t *testing.T, ws string) []protocol.PackageID {
	t.Helper()
	dist := func(name, files string) map[string]string {
		di := cacheSite + name + "-1.0.dist-info/"
		return map[string]string{
			di + "METADATA":                   "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n\n",
			di + "RECORD":                     name + "/__init__.py,,\n" + files,
			cacheSite + name + "/__init__.py": "",
		}
	}
	files := map[string]string{
		"pyproject.toml":                       "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\"]\n\n[tool.uv.sources]\nlocal = { path = \"local\" }\n",
		".venv/pyvenv.cfg":                     "version = 3.12.1\n",
		"local/pyproject.toml":                 "[project]\nname = \"local\"\nversion = \"0.5\"\n\n[tool.symposium]\nname = \"local-plugin\"\n",
		cacheSite + "tomlplug/SYMPOSIUM.toml":  "name = \"toml-plugin\"\n",
		cacheSite + "plain/skills/x/notes.txt": "",
	}
	for _, m := range []map[string]string{dist("epplug", ""), dist("tomlplug", ""), dist("plain", "")} {
		for k, v := range m {
			files[k] = v
		}
	}
	files[cacheSite+"epplug-1.0.dist-info/entry_points.txt"] = "[symposium]\nepplug = epplug\n"
	writeTree(t, ws, files)
	return []protocol.PackageID{pkgID("epplug", "1.0"), pkgID("tomlplug", "1.0"), pkgID("plain", "1.0"), pkgID("local", "*")}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestActivePluginsCache: a second active_plugins on unchanged files is
// served from the persisted cache; after each kind of change, the cached
// PM answers exactly what a PM without a cache answers.
func TestActivePluginsCache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, ws string)
	}{
		{"nothing", func(*testing.T, string) {}},
		{"entry point added", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{cacheSite + "plain-1.0.dist-info/entry_points.txt": "[symposium]\nplain = plain\n"})
		}},
		{"entry point removed", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, cacheSite+"epplug-1.0.dist-info/entry_points.txt"))
		}},
		{"entry points edited in place", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{cacheSite + "epplug-1.0.dist-info/entry_points.txt": "[console_scripts]\nx = epplug:main\n"})
		}},
		{"SYMPOSIUM.toml added", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{cacheSite + "plain/SYMPOSIUM.toml": "name = \"plain-plugin\"\n"})
		}},
		{"SYMPOSIUM.toml removed", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, cacheSite+"tomlplug/SYMPOSIUM.toml"))
		}},
		{"SYMPOSIUM.toml edited", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{cacheSite + "tomlplug/SYMPOSIUM.toml": "name = \"renamed\"\n"})
		}},
		{"distribution reinstalled at another version", func(t *testing.T, ws string) {
			site := filepath.Join(ws, cacheSite)
			os.RemoveAll(filepath.Join(site, "tomlplug-1.0.dist-info"))
			writeTree(t, site, map[string]string{
				"tomlplug-2.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tomlplug\nVersion: 2.0\n\n",
				"tomlplug-2.0.dist-info/RECORD":   "tomlplug/__init__.py,,\n",
			})
		}},
		{"package directory replaced", func(t *testing.T, ws string) {
			site := filepath.Join(ws, cacheSite)
			writeTree(t, site, map[string]string{".new/__init__.py": ""})
			os.RemoveAll(filepath.Join(site, "tomlplug"))
			if err := os.Rename(filepath.Join(site, ".new"), filepath.Join(site, "tomlplug")); err != nil {
				t.Fatal(err)
			}
		}},
		{"path dependency's pyproject edited", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{"local/pyproject.toml": "[project]\nname = \"local\"\nversion = \"0.5\"\n\n[tool.symposium]\nname = \"renamed\"\n"})
		}},
		{"path dependency moved by the manifest", func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{
				"pyproject.toml":       "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\"]\n\n[tool.uv.sources]\nlocal = { path = \"other\" }\n",
				"other/pyproject.toml": "[project]\nname = \"local\"\nversion = \"0.5\"\n",
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			deps := cacheProject(t, ws)
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			cache := t.TempDir()
			ctx := context.Background()
			first, err := newPM(t, ws, cache, nil).ActivePlugins(ctx, deps)
			if err != nil {
				t.Fatal(err)
			}
			if len(first) != 3 {
				t.Fatalf("first answer %v", pmtest.OfferSet(first))
			}
			if files, _ := filepath.Glob(filepath.Join(cache, Name, "active_plugins", "*.cache")); len(files) != 1 {
				t.Fatalf("persisted entries %v", files)
			}
			tc.change(t, ws)
			got, err := newPM(t, ws, cache, nil).ActivePlugins(ctx, deps)
			if err != nil {
				t.Fatal(err)
			}
			want, err := newPM(t, ws, "", nil).ActivePlugins(ctx, deps)
			if err != nil {
				t.Fatal(err)
			}
			pmtest.CheckInvalidation(t, tc.name != "nothing", first, got, want)
		})
	}
}
