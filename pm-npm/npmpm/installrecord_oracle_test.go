package npmpm

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// publishPlugins publishes plug 1.0.0 (a SYMPOSIUM.toml) and 2.0.0 (a
// "symposium" object), and plain 1.0.0 (no plugin).
func publishPlugins(reg *fakeregistry.Registry) {
	reg.Publish(fakeregistry.Version{Name: "plug", Version: "1.0.0", Files: map[string]string{"SYMPOSIUM.toml": "[defaults]\nskills = false\n"}})
	reg.Publish(fakeregistry.Version{Name: "plug", Version: "2.0.0", Files: map[string]string{
		"package.json": `{"name":"plug","version":"2.0.0","symposium":{"skills":[]}}`}})
	reg.Publish(fakeregistry.Version{Name: "plain", Version: "1.0.0"})
}

// installerTool is one installer driven by TestInstallerRecordRealTools.
type installerTool struct {
	name   string
	record string // its record, relative to the project
	// run runs the tool in dir with args.
	run func(t *testing.T, dir string, args ...string)
	// install, add and remove are the arguments of an install, of
	// installing plug@2.0.0, and of removing plug.
	install, add, remove []string
	// rerun is the install that rewrites the record though nothing changed
	// (nil when the tool has none): what the README tells a user to run
	// after a hand edit inside node_modules.
	rerun []string
	files map[string]string // written in the project besides package.json
}

// TestInstallerRecordRealTools proves with the real installers the record
// each one keeps (installrecord.go): installed from the loopback registry,
// the project is hooked twice (the second answered from the persisted
// answer, which stamps the record and no installed package.json); the
// tool installs plug 2.0.0, then removes plug, each time rewriting its
// record, and each next hook answers what a PM without a cache answers.
// npm always runs; pnpm 9, yarn 1 and yarn 4 (with the node-modules
// linker) run when they can be installed from the npm registry.
func TestInstallerRecordRealTools(t *testing.T) {
	reg := oracleRegistry(t, "installs and changes projects with npm, pnpm and yarn")
	publishPlugins(reg)
	tools := []installerTool{{
		name: "npm", record: "node_modules/.package-lock.json",
		run:     func(t *testing.T, dir string, args ...string) { runNPM(t, reg, dir, args...) },
		install: []string{"install", "--ignore-scripts"}, add: []string{"install", "--ignore-scripts", "plug@2.0.0"},
		remove: []string{"uninstall", "--ignore-scripts", "plug"}, rerun: []string{"install", "--ignore-scripts"},
	}}
	if os.Getenv("SYMPOSIUM_NPM_ONLY") == "" {
		bins := installSharedTools(t)
		tool := func(alias string, env []string) func(t *testing.T, dir string, args ...string) {
			return func(t *testing.T, dir string, args ...string) { runTool(t, reg, dir, bins[alias], env, args...) }
		}
		yarnFlags := []string{"--ignore-scripts", "--non-interactive", "--no-progress"}
		berryEnv := []string{"YARN_NPM_REGISTRY_SERVER=$REGISTRY", "YARN_UNSAFE_HTTP_WHITELIST=127.0.0.1",
			"YARN_ENABLE_IMMUTABLE_INSTALLS=false", "YARN_ENABLE_TELEMETRY=0", "YARN_ENABLE_GLOBAL_CACHE=false",
			"YARN_NODE_LINKER=node-modules"}
		tools = append(tools,
			installerTool{name: "pnpm 9", record: "node_modules/.modules.yaml",
				// pnpm refuses to change an install from another store: one
				// store per project, beside it.
				run: func(t *testing.T, dir string, args ...string) {
					tool("pnpm9", []string{"npm_config_store_dir=" + dir + ".store"})(t, dir, args...)
				},
				install: []string{"install", "--ignore-scripts"}, add: []string{"add", "--ignore-scripts", "plug@2.0.0"},
				remove: []string{"remove", "plug"}, rerun: []string{"install", "--ignore-scripts"}},
			installerTool{name: "yarn 1", record: "node_modules/.yarn-integrity", run: tool("yarn1", nil),
				install: append([]string{"install"}, yarnFlags...), add: append([]string{"add", "plug@2.0.0"}, yarnFlags...),
				remove: append([]string{"remove", "plug"}, yarnFlags...), rerun: append([]string{"install", "--check-files"}, yarnFlags...)},
			installerTool{name: "yarn 4 node-modules", record: "node_modules/.yarn-state.yml", run: tool("berry4", berryEnv),
				install: []string{"install", "--mode=skip-build"}, add: []string{"add", "plug@2.0.0", "--mode=skip-build"},
				remove: []string{"remove", "plug", "--mode=skip-build"}, files: map[string]string{"yarn.lock": ""}},
		)
	}
	for _, tool := range tools {
		t.Run(tool.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := map[string]string{"package.json": `{"name":"app","version":"1.0.0","dependencies":{"plug":"^1.0.0","plain":"1.0.0"}}`}
			maps.Copy(files, tool.files)
			writeFiles(t, dir, files)
			tool.run(t, dir, tool.install...)
			record := filepath.Join(dir, filepath.FromSlash(tool.record))
			if _, err := os.Stat(record); err != nil {
				t.Fatalf("%s kept no record: %v", tool.name, err)
			}
			var computed atomic.Int32
			env := map[string]string{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc")}
			cacheDir := t.TempDir()
			hook := func(cache string) pmtest.Hook {
				return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), &computed} },
					Options: host.Options{Workspace: dir, CacheDir: cache, Env: env}}
			}
			cached, fresh := hook(cacheDir), hook("")
			// stage hooks twice after settling: the first hook computes
			// what a PM without a cache answers, offering want; the
			// second is served from the persisted answer.
			stage := func(what string, want []string) {
				t.Helper()
				settle()
				computed.Store(0)
				got := cached.Run(t).Offers
				if computed.Load() != 1 {
					t.Errorf("%s: the hook computed %d answers, want 1 (a changed install must not be served from the cache)", what, computed.Load())
				}
				if g, w := pmtest.OfferSet(got), pmtest.OfferSet(fresh.Run(t).Offers); !maps.Equal(g, w) {
					t.Fatalf("%s: the cached PM offers %v, a PM without a cache %v", what, g, w)
				}
				var ids []string
				for _, o := range got {
					ids = append(ids, o.ID.Name+"@"+o.ID.Version)
				}
				if slices.Sort(ids); !slices.Equal(ids, want) {
					t.Fatalf("%s: offers %v, want %v", what, ids, want)
				}
				computed.Store(0)
				cached.Run(t)
				if computed.Load() != 0 {
					t.Errorf("%s: the second hook computed %d answers, want 0 (served from the cache)", what, computed.Load())
				}
			}
			stage("installed", []string{"plug@1.0.0"})
			checkStampsRecord(t, cacheDir, record)
			// A hand edit inside installed content is not seen (the trade)
			// until the tool rewrites its record.
			writeFiles(t, dir, map[string]string{"node_modules/plug/SYMPOSIUM.toml": "[defaults]\nskills = true\n"})
			computed.Store(0)
			cached.Run(t)
			if computed.Load() != 0 {
				t.Errorf("a hand edit inside installed content was seen without the installer running (the record stands for it)")
			}
			if tool.rerun != nil {
				before := depcache.Take(record)
				tool.run(t, dir, tool.rerun...)
				if depcache.Take(record) == before {
					t.Errorf("%s %v did not rewrite %s", tool.name, tool.rerun, tool.record)
				}
				stage("reinstalled after a hand edit", []string{"plug@1.0.0"})
			}
			for _, step := range []struct {
				what string
				args []string
				want []string
			}{
				{"plug 2.0.0 installed", tool.add, []string{"plug@2.0.0"}},
				{"plug removed", tool.remove, nil},
			} {
				before := depcache.Take(record)
				tool.run(t, dir, step.args...)
				if after := depcache.Take(record); after == before {
					t.Errorf("%s: %s did not rewrite %s", step.what, tool.name, tool.record)
				}
				stage(step.what, step.want)
			}
		})
	}
}

// checkStampsRecord fails t unless the persisted active_plugins answers
// under cacheDir stamp record and no package.json of an installed
// package: the installer's record stands for them.
func checkStampsRecord(t *testing.T, cacheDir, record string) {
	t.Helper()
	for _, paths := range persistedEntries(t, cacheDir) {
		stamped := false
		for _, p := range paths {
			stamped = stamped || p == record
			if strings.Contains(p, "node_modules") && filepath.Base(p) == "package.json" {
				t.Errorf("the persisted answer stamps %s, which the installer's record stands for", p)
			}
		}
		if !stamped {
			t.Errorf("the persisted answer does not stamp the installer's record %s", record)
		}
	}
}

// TestPnpmFileDepRealTool: real pnpm 9 installs a file: directory
// dependency as hard links into node_modules/.pnpm, so an edit of the
// user's directory in place is an edit of the installed copy, though
// pnpm's record does not change: the hook must see it.
func TestPnpmFileDepRealTool(t *testing.T) {
	reg := oracleRegistry(t, "installs pnpm and a file: dependency with it")
	bins := installSharedTools(t)
	base := t.TempDir()
	dir := filepath.Join(base, "app")
	writeFiles(t, base, map[string]string{
		"app/package.json":     `{"name":"app","version":"1.0.0","dependencies":{"local":"file:../local"}}`,
		"local/package.json":   `{"name":"local","version":"0.1.0"}`,
		"local/SYMPOSIUM.toml": "",
	})
	runTool(t, reg, dir, bins["pnpm9"], []string{"npm_config_store_dir=" + filepath.Join(base, "store")}, "install", "--ignore-scripts")
	if real, err := filepath.EvalSymlinks(filepath.Join(dir, "node_modules", "local")); err != nil || !strings.Contains(real, "@file+") {
		t.Fatalf("pnpm installed local at %s (%v), not as a copy in .pnpm", real, err)
	}
	settle()
	var computed atomic.Int32
	env := map[string]string{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc")}
	hook := func(cache string) pmtest.Hook {
		return pmtest.Hook{New: func() pmserver.PM { return countingPM{New(), &computed} },
			Options: host.Options{Workspace: dir, CacheDir: cache, Env: env}}
	}
	cached, fresh := hook(t.TempDir()), hook("")
	pmtest.CheckServedEncoded(t, cached, fresh, &computed, func() {
		f, err := os.OpenFile(filepath.Join(base, "local", "SYMPOSIUM.toml"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString("[defaults]\nskills = true\n"); err != nil {
			t.Fatal(err)
		}
	})
}
