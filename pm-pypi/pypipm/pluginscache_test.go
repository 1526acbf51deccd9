package pypipm

import (
	"context"
	"maps"
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
// its package, one plain), each with a RECORD as installers write, and a
// path dependency with [tool.symposium].
func cacheProject(t *testing.T, ws string) []protocol.PackageID {
	t.Helper()
	files := map[string]string{
		"pyproject.toml":                       "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\"]\n\n[tool.uv.sources]\nlocal = { path = \"local\" }\n",
		".venv/pyvenv.cfg":                     "version = 3.12.1\n",
		"local/pyproject.toml":                 "[project]\nname = \"local\"\nversion = \"0.5\"\n\n[tool.symposium]\nname = \"local-plugin\"\n",
		cacheSite + "plain/skills/x/notes.txt": "",
	}
	for _, m := range []map[string]string{
		distFiles("epplug", map[string]string{"epplug-1.0.dist-info/entry_points.txt": "[symposium]\nepplug = epplug\n"}),
		distFiles("tomlplug", map[string]string{"tomlplug/SYMPOSIUM.toml": "name = \"toml-plugin\"\n"}),
		distFiles("plain", nil),
	} {
		for k, v := range m {
			files[cacheSite+k] = v
		}
	}
	writeTree(t, ws, files)
	settle()
	return []protocol.PackageID{pkgID("epplug", "1.0"), pkgID("tomlplug", "1.0"), pkgID("plain", "1.0"), pkgID("local", "*")}
}

// distFiles returns the files, relative to site-packages, of name 1.0 as
// an installer writes it: its package's __init__.py, METADATA, RECORD and
// extra.
func distFiles(name string, extra map[string]string) map[string]string {
	di := name + "-1.0.dist-info/"
	files := map[string]string{
		di + "METADATA":       "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n\n",
		di + "RECORD":         name + "/__init__.py,,\n",
		name + "/__init__.py": "",
		di + "INSTALLER":      "pip\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return files
}

// reinstall does to the virtualenv in ws what pip install --force-reinstall
// does to name 1.0: its dist-info and package directories are removed, then
// written anew from distFiles(name, extra), RECORD last.
func reinstall(t *testing.T, ws, name string, extra map[string]string) {
	t.Helper()
	uninstall(t, ws, name)
	files := distFiles(name, extra)
	record := name + "-1.0.dist-info/RECORD"
	rest := map[string]string{}
	for k, v := range files {
		if k != record {
			rest[k] = v
		}
	}
	site := filepath.Join(ws, cacheSite)
	writeTree(t, site, rest)
	writeTree(t, site, map[string]string{record: files[record]})
}

// uninstall does to the virtualenv in ws what pip uninstall does to name
// 1.0: its dist-info and package directories are removed.
func uninstall(t *testing.T, ws, name string) {
	t.Helper()
	site := filepath.Join(ws, cacheSite)
	for _, d := range []string{name + "-1.0.dist-info", name} {
		if err := os.RemoveAll(filepath.Join(site, d)); err != nil {
			t.Fatal(err)
		}
	}
}

// handMade makes tomlplug's dist-info one no installer finished writing:
// no RECORD (its top-level package named by top_level.txt instead).
func handMade(t *testing.T, ws string) {
	t.Helper()
	di := filepath.Join(ws, cacheSite, "tomlplug-1.0.dist-info")
	if err := os.Remove(filepath.Join(di, "RECORD")); err != nil {
		t.Fatal(err)
	}
	writeTree(t, di, map[string]string{"top_level.txt": "tomlplug\n"})
}

// editablePlain makes plain an editable install of the project directory
// plainsrc (direct_url.json and the .pth file its RECORD lists), whose
// tree offers no plugin yet.
func editablePlain(t *testing.T, ws string) {
	t.Helper()
	uninstall(t, ws, "plain")
	proj := filepath.Join(ws, "plainsrc")
	files := editable("plain", proj)
	files["plainsrc/pyproject.toml"] = "[project]\nname = \"plain\"\nversion = \"1.0\"\n"
	writeTree(t, ws, files)
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

// cacheCases are the changes after which a cached active_plugins answer
// must be computed again (or, for the cases with unseen set, must not):
// setup, when set, shapes the project before the first answer.
var cacheCases = []struct {
	name   string
	setup  func(t *testing.T, ws string)
	change func(t *testing.T, ws string)
	// unseen marks a change the cached answer deliberately does not see: a
	// hand edit inside files an installer owns, trusted on the stamp of
	// site-packages (the documented trade, see owned.go).
	unseen bool
}{
	// Installed distributions change the way installers change them.
	{name: "reinstalled with an entry point", change: func(t *testing.T, ws string) {
		reinstall(t, ws, "plain", map[string]string{"plain-1.0.dist-info/entry_points.txt": "[symposium]\nplain = plain\n"})
	}},
	{name: "reinstalled without its entry point", change: func(t *testing.T, ws string) {
		reinstall(t, ws, "epplug", nil)
	}},
	{name: "reinstalled with other entry points", change: func(t *testing.T, ws string) {
		reinstall(t, ws, "epplug", map[string]string{"epplug-1.0.dist-info/entry_points.txt": "[console_scripts]\nx = epplug:main\n"})
	}},
	{name: "reinstalled with a SYMPOSIUM.toml", change: func(t *testing.T, ws string) {
		reinstall(t, ws, "plain", map[string]string{"plain/SYMPOSIUM.toml": "name = \"plain-plugin\"\n"})
	}},
	{name: "reinstalled without its SYMPOSIUM.toml", change: func(t *testing.T, ws string) {
		reinstall(t, ws, "tomlplug", nil)
	}},
	{name: "reinstalled with another SYMPOSIUM.toml", change: func(t *testing.T, ws string) {
		reinstall(t, ws, "tomlplug", map[string]string{"tomlplug/SYMPOSIUM.toml": "name = \"renamed\"\n"})
	}},
	{name: "uninstalled", change: func(t *testing.T, ws string) {
		uninstall(t, ws, "epplug")
	}},
	{name: "distribution reinstalled at another version", change: func(t *testing.T, ws string) {
		site := filepath.Join(ws, cacheSite)
		os.RemoveAll(filepath.Join(site, "tomlplug-1.0.dist-info"))
		writeTree(t, site, map[string]string{
			"tomlplug-2.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: tomlplug\nVersion: 2.0\n\n",
			"tomlplug-2.0.dist-info/RECORD":   "tomlplug/__init__.py,,\n",
		})
	}},
	{name: "package directory replaced", change: func(t *testing.T, ws string) {
		site := filepath.Join(ws, cacheSite)
		writeTree(t, site, map[string]string{".new/__init__.py": ""})
		os.RemoveAll(filepath.Join(site, "tomlplug"))
		if err := os.Rename(filepath.Join(site, ".new"), filepath.Join(site, "tomlplug")); err != nil {
			t.Fatal(err)
		}
	}},
	// The trade: a hand edit inside an installed distribution, its
	// installer's record (site-packages) unchanged, is not seen.
	{name: "installed SYMPOSIUM.toml edited by hand", unseen: true, change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{cacheSite + "tomlplug/SYMPOSIUM.toml": "name = \"renamed\"\n"})
	}},
	{name: "installed entry points edited by hand", unseen: true, change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{cacheSite + "epplug-1.0.dist-info/entry_points.txt": "[console_scripts]\nx = epplug:main\n"})
	}},
	// The fallback: a dist-info without RECORD is stamped file by file.
	{name: "no RECORD: SYMPOSIUM.toml edited in place", setup: handMade, change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{cacheSite + "tomlplug/SYMPOSIUM.toml": "name = \"renamed\"\n"})
	}},
	{name: "no RECORD: top_level.txt edited in place", setup: handMade, change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{cacheSite + "tomlplug-1.0.dist-info/top_level.txt": "other\n"})
	}},
	// What a user edits is stamped file by file.
	{name: "editable install's project gets a SYMPOSIUM.toml", setup: editablePlain, change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{"plainsrc/SYMPOSIUM.toml": "name = \"plain-plugin\"\n"})
	}},
	{name: "editable install's pyproject gets tool.symposium in place", setup: editablePlain, change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{"plainsrc/pyproject.toml": "[project]\nname = \"plain\"\nversion = \"1.0\"\n\n[tool.symposium]\nname = \"plain-plugin\"\n"})
	}},
	{name: "path dependency's pyproject edited", change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{"local/pyproject.toml": "[project]\nname = \"local\"\nversion = \"0.5\"\n\n[tool.symposium]\nname = \"renamed\"\n"})
	}},
	{name: "path dependency moved by the manifest", change: func(t *testing.T, ws string) {
		writeTree(t, ws, map[string]string{
			"pyproject.toml":       "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\"]\n\n[tool.uv.sources]\nlocal = { path = \"other\" }\n",
			"other/pyproject.toml": "[project]\nname = \"local\"\nversion = \"0.5\"\n",
		})
	}},
}

// TestActivePluginsCache: a second active_plugins on unchanged files is
// served from the persisted cache; after each change of cacheCases, the
// cached PM answers exactly what a PM without a cache answers (or, for a
// change it deliberately does not see, its first answer, which a PM
// without a cache no longer gives).
func TestActivePluginsCache(t *testing.T) {
	cases := append([]struct {
		name   string
		setup  func(t *testing.T, ws string)
		change func(t *testing.T, ws string)
		unseen bool
	}{{name: "nothing", change: func(*testing.T, string) {}}}, cacheCases...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own workspace and cache
			ws := t.TempDir()
			deps := cacheProject(t, ws)
			if tc.setup != nil {
				tc.setup(t, ws)
			}
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
			got, want := cachedAndCold(t, ws, cache, deps)
			if tc.unseen {
				checkUnseen(t, first, got, want)
				return
			}
			pmtest.CheckInvalidation(t, tc.name != "nothing", first, got, want)
		})
	}
}

// cachedAndCold returns what active_plugins answers for deps in ws from
// cache, and what a PM with no cache answers.
func cachedAndCold(t *testing.T, ws, cache string, deps []protocol.PackageID) (cached, cold []protocol.Offer) {
	t.Helper()
	ctx := context.Background()
	cached, err := newPM(t, ws, cache, nil).ActivePlugins(ctx, deps)
	if err != nil {
		t.Fatal(err)
	}
	cold, err = newPM(t, ws, "", nil).ActivePlugins(ctx, deps)
	if err != nil {
		t.Fatal(err)
	}
	return cached, cold
}

// checkUnseen checks a change the cache deliberately does not see: the
// cached PM still answers first, and a PM without a cache answers
// otherwise (or the case tests nothing).
func checkUnseen(t *testing.T, first, cached, fresh []protocol.Offer) {
	t.Helper()
	if !maps.Equal(pmtest.OfferSet(cached), pmtest.OfferSet(first)) {
		t.Errorf("the cached PM saw a hand edit inside an installed distribution: answered\n%v\nthen\n%v", pmtest.OfferSet(first), pmtest.OfferSet(cached))
	}
	if maps.Equal(pmtest.OfferSet(fresh), pmtest.OfferSet(first)) {
		t.Errorf("the change did not change the answer: the case tests nothing")
	}
}

// TestActivePluginsSeesDistInfoCompleted: a dist-info directory named for
// a dependency whose METADATA is missing when active_plugins answers (an
// installer or a hook has not finished it) is passed over and recorded, so
// that once METADATA is written a warm active_plugins agrees with a cold
// one. Alone, it is warned about (the dependency's plugins are not
// offered), which keeps the answer from being persisted; shadowing a
// later, complete dist-info of the same name, it is not, and the persisted
// answer must see it completed.
func TestActivePluginsSeesDistInfoCompleted(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    map[string]string
		dep      protocol.PackageID
		warned   bool
		persists int
	}{
		{"alone", map[string]string{
			"late-1.0.dist-info/top_level.txt": "late\n",
			"late/SYMPOSIUM.toml":              "name = \"late-plugin\"\n",
			"late/__init__.py":                 "",
		}, pkgID("late", "1.0"), true, 0},
		{"shadowing a complete one", map[string]string{
			"late-1.0.dist-info/top_level.txt": "late\n",
			"late-2.0.dist-info/METADATA":      "Metadata-Version: 2.1\nName: late\nVersion: 2.0\n\n",
			"late-2.0.dist-info/top_level.txt": "late\n",
			"late/SYMPOSIUM.toml":              "name = \"late-plugin\"\n",
			"late/__init__.py":                 "",
		}, pkgID("late", "*"), false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own workspace and cache
			ws := t.TempDir()
			deps := append(cacheProject(t, ws), tc.dep)
			site := filepath.Join(ws, cacheSite)
			writeTree(t, site, tc.files)
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			cache := t.TempDir()
			ctx := context.Background()
			pm := newPM(t, ws, cache, nil)
			first, err := pm.ActivePlugins(ctx, deps)
			if err != nil {
				t.Fatal(err)
			}
			if warned := pm.warnings.Count() != 0; warned != tc.warned {
				t.Errorf("warned %v, want %v", warned, tc.warned)
			}
			if files, _ := filepath.Glob(filepath.Join(cache, Name, "active_plugins", "*.cache")); len(files) != tc.persists {
				t.Fatalf("persisted entries %v, want %d", files, tc.persists)
			}
			// The installer (or the user) finishes the dist-info.
			writeTree(t, site, map[string]string{"late-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: late\nVersion: 1.0\n\n"})
			got, want := cachedAndCold(t, ws, cache, deps)
			pmtest.CheckInvalidation(t, true, first, got, want)
		})
	}
}
