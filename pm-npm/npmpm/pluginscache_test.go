package npmpm

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// cacheWorkspace writes a two-member workspace with five installed
// dependencies (two with plugins, one in a member's own node_modules, one
// scoped) and returns the dependencies as list_deps reports them.
func cacheWorkspace(t *testing.T, ws string) []protocol.PackageID {
	t.Helper()
	writeFiles(t, ws, map[string]string{
		"package.json":                             `{"name":"root","private":true,"workspaces":["packages/*"]}`,
		"packages/a/package.json":                  `{"name":"a","version":"1.0.0"}`,
		"packages/b/package.json":                  `{"name":"b","version":"1.0.0"}`,
		"packages/a/node_modules/own/package.json": `{"name":"own","version":"2.0.0"}`,
		"node_modules/own/package.json":            `{"name":"own","version":"2.0.0"}`,
		"node_modules/own/SYMPOSIUM.toml":          "",
		"node_modules/plain/package.json":          `{"name":"plain","version":"1.0.0"}`,
		"node_modules/plain/skills/x/notes.txt":    "",
		"node_modules/toml/package.json":           `{"name":"toml","version":"1.0.0"}`,
		"node_modules/toml/SYMPOSIUM.toml":         "[defaults]\nskills = false\n",
		"node_modules/json/package.json":           `{"name":"json","version":"1.0.0","symposium":{}}`,
		"node_modules/@s/scoped/package.json":      `{"name":"@s/scoped","version":"1.0.0"}`,
	})
	return []protocol.PackageID{npmID("plain", "1.0.0"), npmID("toml", "1.0.0"), npmID("json", "1.0.0"), npmID("@s/scoped", "1.0.0"), npmID("own", "2.0.0"), npmID("new", "1.0.0")}
}

// settle waits out the racy window, so that an answer read from files just
// written is persisted.
func settle() { time.Sleep(depcache.RacyWindow + 20*time.Millisecond) }

// TestActivePluginsCache: a second active_plugins on unchanged files is
// answered from the persisted cache without opening a package file; after
// each kind of change, the cached PM answers exactly what a PM without a
// cache answers.
func TestActivePluginsCache(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, ws string)
	}{
		{"nothing", func(*testing.T, string) {}},
		{"manifest gains a symposium object", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/plain/package.json": `{"name":"plain","version":"1.0.0","symposium":{}}`})
		}},
		{"manifest loses its symposium object", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/json/package.json": `{"name":"json","version":"1.0.0"}`})
		}},
		{"SYMPOSIUM.toml added", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/@s/scoped/SYMPOSIUM.toml": ""})
		}},
		{"SYMPOSIUM.toml removed", func(t *testing.T, ws string) {
			os.Remove(filepath.Join(ws, "node_modules/toml/SYMPOSIUM.toml"))
		}},
		{"SYMPOSIUM.toml edited", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/toml/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
		}},
		{"SKILL.md added deep in skills", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/plain/skills/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
		}},
		// sk (written beside cacheWorkspace's packages below) embeds its
		// plugin through skills/s/SKILL.md alone, so its
		// answer rests on four stamps (package.json, the package
		// directory, skills and skills/s), and each skills directory is
		// the only one to see one of these changes: a .symposium marker in
		// skills (the walk skips a directory holding one) changes skills
		// alone; SKILL.md removed, or a marker in skills/s, changes
		// skills/s alone.
		{"marker in skills", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/sk/skills/.symposium": ""})
		}},
		{"marker in skills/s", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/sk/skills/s/.symposium": ""})
		}},
		{"SKILL.md removed", func(t *testing.T, ws string) {
			if err := os.Remove(filepath.Join(ws, "node_modules/sk/skills/s/SKILL.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{"dependency installed", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/new/package.json": `{"name":"new","version":"1.0.0","symposium":{}}`})
		}},
		{"dependency directory replaced", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"node_modules/.tmp/package.json": `{"name":"toml","version":"1.0.0","symposium":{}}`})
			os.RemoveAll(filepath.Join(ws, "node_modules/toml"))
			if err := os.Rename(filepath.Join(ws, "node_modules/.tmp"), filepath.Join(ws, "node_modules/toml")); err != nil {
				t.Fatal(err)
			}
		}},
		{"member's own copy gains a plugin", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{"packages/a/node_modules/own/SYMPOSIUM.toml": ""})
		}},
		{"new member with its own copy", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{
				"packages/c/package.json":                    `{"name":"c","version":"1.0.0"}`,
				"packages/c/node_modules/new/package.json":   `{"name":"new","version":"1.0.0"}`,
				"packages/c/node_modules/new/SYMPOSIUM.toml": "",
			})
		}},
		{"workspaces field changed", func(t *testing.T, ws string) {
			writeFiles(t, ws, map[string]string{
				"package.json": `{"name":"root","private":true,"workspaces":["packages/b"]}`,
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := t.TempDir()
			deps := append(cacheWorkspace(t, ws), npmID("sk", "1.0.0"))
			writeFiles(t, ws, map[string]string{
				"node_modules/sk/package.json":      `{"name":"sk","version":"1.0.0"}`,
				"node_modules/sk/skills/s/SKILL.md": "---\nname: s\ndescription: d\n---\n",
			})
			settle()
			p, _ := newPM(t, ws, nil)
			first, err := p.ActivePlugins(context.Background(), deps)
			if err != nil {
				t.Fatal(err)
			}
			disk := &countingDisk{}
			p.diskReader = disk
			second, err := p.ActivePlugins(context.Background(), deps)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pmtest.OfferSet(first), pmtest.OfferSet(second)) {
				t.Fatalf("cached answer %v differs from %v", pmtest.OfferSet(second), pmtest.OfferSet(first))
			}
			if disk.lists+disk.reads != 0 {
				t.Fatalf("cache hit listed %d directories and read %d files", disk.lists, disk.reads)
			}
			tc.change(t, ws)
			got, err := p.ActivePlugins(context.Background(), deps)
			if err != nil {
				t.Fatal(err)
			}
			fresh, _ := newPM(t, ws, nil)
			fresh.cacheRoot = ""
			want, err := fresh.ActivePlugins(context.Background(), deps)
			if err != nil {
				t.Fatal(err)
			}
			pmtest.CheckInvalidation(t, tc.name != "nothing", first, got, want)
		})
	}
}

// TestActivePluginsCacheKeyedOnDeps: another dependency set is another
// answer.
func TestActivePluginsCacheKeyedOnDeps(t *testing.T) {
	ws := t.TempDir()
	deps := cacheWorkspace(t, ws)
	settle()
	p, _ := newPM(t, ws, nil)
	all, _ := p.ActivePlugins(context.Background(), deps)
	one, _ := p.ActivePlugins(context.Background(), deps[1:2])
	if len(all) != 2 || len(one) != 1 || one[0].ID.Name != "toml" {
		t.Errorf("all %v, one %v", pmtest.OfferSet(all), pmtest.OfferSet(one))
	}
}

// TestActivePluginsWarningNotCached: an answer whose computation warned is
// recomputed (and warns again) rather than served from the cache.
func TestActivePluginsWarningNotCached(t *testing.T) {
	ws := t.TempDir()
	deps := cacheWorkspace(t, ws)
	writeFiles(t, ws, map[string]string{"node_modules/plain/package.json": `{"name":"plain","version":"1.0.0","symposium":{"skills":7}}`})
	settle()
	p, _ := newPM(t, ws, nil)
	for i := range 2 {
		before := p.warnings.Count()
		if _, err := p.ActivePlugins(context.Background(), deps); err != nil {
			t.Fatal(err)
		}
		if p.warnings.Count() == before {
			t.Fatalf("call %d did not warn", i+1)
		}
	}
}

// TestActivePluginsCacheForgedRoot: a cache entry rewritten to offer a root
// the answer was not read from is ignored, and the answer recomputed.
func TestActivePluginsCacheForgedRoot(t *testing.T) {
	ws := t.TempDir()
	deps := cacheWorkspace(t, ws)
	settle()
	p, _ := newPM(t, ws, nil)
	want, err := p.ActivePlugins(context.Background(), deps)
	if err != nil || len(want) == 0 {
		t.Fatal(want, err)
	}
	files, _ := filepath.Glob(filepath.Join(p.cacheRoot, "active_plugins", "*.cache"))
	if len(files) != 1 {
		t.Fatalf("entries %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	forged := strings.ReplaceAll(string(data), `"root":"`+want[0].Root+`"`, `"root":"`+elsewhere+`"`)
	if forged == string(data) {
		t.Fatal("the entry does not hold the root as expected")
	}
	if err := os.WriteFile(files[0], []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := p.ActivePlugins(context.Background(), deps)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range got {
		if o.Root == elsewhere {
			t.Fatalf("offered the forged root %s", elsewhere)
		}
	}
	if !reflect.DeepEqual(pmtest.OfferSet(got), pmtest.OfferSet(want)) {
		t.Errorf("after the forgery: %v, want %v", pmtest.OfferSet(got), pmtest.OfferSet(want))
	}
}
