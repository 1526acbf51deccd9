package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// A host may keep one connection to the PM for a whole session and send
// list_deps and active_plugins at every hook. These tests change the
// workspace between two hooks of one connection and check that the second
// answers from the files as they are then.

// liveConn opens a connection to pm on ws, kept open for the test.
func liveConn(t *testing.T, pm pmserver.PM, ws, cache string, env map[string]string) *host.Conn {
	t.Helper()
	c, err := host.NewLocal(t.Context(), pm, host.Options{Workspace: ws, CacheDir: cache, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// listOn sends list_deps on c and returns its answer and diagnostics.
func listOn(t *testing.T, c *host.Conn) ([]protocol.PackageID, []protocol.Diagnostic) {
	t.Helper()
	var deps []protocol.PackageID
	diags, err := c.CallDiagnostics(t.Context(), protocol.MethodListDeps, struct{}{}, &deps)
	if err != nil {
		t.Fatalf("list_deps: %v", err)
	}
	return deps, diags
}

// pluginsOn sends active_plugins for deps on c and returns the names of
// the distributions offering plugins, sorted, and the diagnostics.
func pluginsOn(t *testing.T, c *host.Conn, deps []protocol.PackageID) ([]string, []protocol.Diagnostic) {
	t.Helper()
	var offers []protocol.Offer
	diags, err := c.CallDiagnostics(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &offers)
	if err != nil {
		t.Fatalf("active_plugins: %v", err)
	}
	var names []string
	for _, o := range offers {
		names = append(names, o.ID.Name)
	}
	slices.Sort(names)
	return names, diags
}

// nowDeps returns what list_deps answers for ws now, from a PM that never
// saw it and has no cache directory.
func nowDeps(t *testing.T, ws string, env map[string]string) []protocol.PackageID {
	t.Helper()
	deps, _ := listOn(t, liveConn(t, New(), ws, "", env))
	return deps
}

// pastSharedRead waits until a read of the persisted answer, or an
// answer computed, is no longer trusted without a check
// (depcache.VerifiedWindow): what a host's next hook sees.
func pastSharedRead() { time.Sleep(depcache.VerifiedWindow + 50*time.Millisecond) }

// liveModes are the two ways a PM answers list_deps: from the answer
// persisted as sent (a cache directory; a first connection persisted it)
// and computed each time (no cache directory).
var liveModes = []struct {
	name      string
	persisted bool
}{{"persisted", true}, {"no cache dir", false}}

// TestListDepsLiveConnection: list_deps, a change of the lockfile, of
// pyproject.toml or of what is installed in the virtualenv, then list_deps
// again on the same connection answers what the files say now, whether
// the first answer was served as persisted or computed without a cache.
func TestListDepsLiveConnection(t *testing.T) {
	const lock = "version = 1\nrevision = 2\n\n[[package]]\nname = \"alpha\"\nversion = \"%s\"\nsource = { registry = \"https://pypi.org/simple\" }\n"
	for _, tc := range []struct {
		name   string
		files  map[string]string
		change func(t *testing.T, ws string)
	}{
		{"uv.lock version moved", map[string]string{
			"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"alpha\"]\n",
			"uv.lock":        strings.Replace(lock, "%s", "1.0", 1),
		}, func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{"uv.lock": strings.Replace(lock, "%s", "1.1.0", 1)})
		}},
		{"pyproject.toml dependency added", map[string]string{
			"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"alpha\"]\n",
			"uv.lock":        strings.Replace(lock, "%s", "1.0", 1),
		}, func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"alpha\", \"beta==2.0\"]\n"})
		}},
		{"requirements.txt pin moved", map[string]string{
			"requirements.txt": "alpha==1.0\n",
		}, func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{"requirements.txt": "alpha==1.2\n"})
		}},
		{"newer version installed in the virtualenv", map[string]string{
			"pyproject.toml":                           "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"gamma\"]\n",
			".venv/pyvenv.cfg":                         "version = 3.12.1\n",
			cacheSite + "gamma-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: gamma\nVersion: 1.0\n\n",
			cacheSite + "gamma-1.0.dist-info/RECORD":   "gamma/__init__.py,,\n",
		}, func(t *testing.T, ws string) {
			site := filepath.Join(ws, cacheSite)
			if err := os.RemoveAll(filepath.Join(site, "gamma-1.0.dist-info")); err != nil {
				t.Fatal(err)
			}
			writeTree(t, site, map[string]string{
				"gamma-2.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: gamma\nVersion: 2.0\n\n",
				"gamma-2.0.dist-info/RECORD":   "gamma/__init__.py,,\n",
			})
		}},
		{"virtualenv created", map[string]string{
			"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"gamma\"]\n",
		}, func(t *testing.T, ws string) {
			writeTree(t, ws, map[string]string{
				".venv/pyvenv.cfg":                         "version = 3.12.1\n",
				cacheSite + "gamma-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: gamma\nVersion: 1.0\n\n",
				cacheSite + "gamma-1.0.dist-info/RECORD":   "gamma/__init__.py,,\n",
			})
		}},
	} {
		for _, mode := range liveModes {
			t.Run(tc.name+"/"+mode.name, func(t *testing.T) {
				t.Parallel()
				ws := t.TempDir()
				writeTree(t, ws, tc.files)
				env := testEnv(t, nil)
				cache := ""
				if mode.persisted {
					settle()
					cache = t.TempDir()
					listOn(t, liveConn(t, New(), ws, cache, env))
				}
				var computed atomic.Int32
				c := liveConn(t, listingPM{New(), &computed}, ws, cache, env)
				before, _ := listOn(t, c)
				if mode.persisted && computed.Load() != 0 {
					t.Fatalf("the first list_deps was computed, not served as persisted: the case does not test the persisted path")
				}
				pastSharedRead()
				tc.change(t, ws)
				want := nowDeps(t, ws, env)
				if slices.Equal(want, before) {
					t.Fatalf("the change does not change the answer (%v): the case tests nothing", want)
				}
				if got, _ := listOn(t, c); !slices.Equal(got, want) {
					t.Errorf("after the change the same connection lists %v, want %v (before the change: %v)", got, want, before)
				}
				// What this connection persisted is what the files say.
				if mode.persisted {
					if got, _ := listOn(t, liveConn(t, New(), ws, cache, env)); !slices.Equal(got, want) {
						t.Errorf("after the change a new connection lists %v, want %v", got, want)
					}
				}
			})
		}
	}
}

// TestActivePluginsLiveConnection: after a path dependency is added to or
// removed from pyproject.toml, active_plugins on the same connection keys
// on the source trees as they are now: the path dependency's plugin is
// offered, or no longer, whether list_deps was asked again in that hook
// or not. After the virtualenv is created, its plugins are offered, and
// what was persisted meanwhile is what a new connection finds too.
func TestActivePluginsLiveConnection(t *testing.T) {
	const (
		registry = "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\"]\n"
		withPath = registry + "\n[tool.uv.sources]\nlocal = { path = \"local\" }\n"
	)
	pyproject := func(body string) func(t *testing.T, ws string) {
		return func(t *testing.T, ws string) { writeTree(t, ws, map[string]string{"pyproject.toml": body}) }
	}
	noVenv := func(t *testing.T, ws string) {
		if err := os.Rename(filepath.Join(ws, ".venv"), filepath.Join(ws, "saved-venv")); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name          string
		setup, change func(t *testing.T, ws string)
		before, after []string
	}{
		{"path dependency added", pyproject(registry), pyproject(withPath), []string{"epplug", "tomlplug"}, []string{"epplug", "local", "tomlplug"}},
		{"path dependency removed", pyproject(withPath), pyproject(registry), []string{"epplug", "local", "tomlplug"}, []string{"epplug", "tomlplug"}},
		{"virtualenv created", noVenv, func(t *testing.T, ws string) {
			if err := os.Rename(filepath.Join(ws, "saved-venv"), filepath.Join(ws, ".venv")); err != nil {
				t.Fatal(err)
			}
		}, []string{"local"}, []string{"epplug", "local", "tomlplug"}},
	} {
		for _, mode := range liveModes {
			for _, listFirst := range []bool{true, false} {
				name := tc.name + "/" + mode.name + "/list_deps first"
				if !listFirst {
					name = tc.name + "/" + mode.name + "/active_plugins alone"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					ws := t.TempDir()
					cacheProject(t, ws)
					tc.setup(t, ws)
					env := testEnv(t, nil)
					cache := ""
					if mode.persisted {
						cache = t.TempDir()
					}
					c := liveConn(t, New(), ws, cache, env)
					deps, _ := listOn(t, c)
					if got, _ := pluginsOn(t, c, deps); !slices.Equal(got, tc.before) {
						t.Fatalf("first hook: plugins of %v, want %v", got, tc.before)
					}
					pastSharedRead()
					tc.change(t, ws)
					// The request names the dependencies as they are now,
					// whatever list_deps answered on this connection: only
					// the source trees active_plugins keys on are tested.
					deps = nowDeps(t, ws, env)
					if listFirst {
						listOn(t, c)
					}
					if got, _ := pluginsOn(t, c, deps); !slices.Equal(got, tc.after) {
						t.Errorf("after the change: plugins of %v, want %v", got, tc.after)
					}
					if got, _ := pluginsOn(t, liveConn(t, New(), ws, cache, env), deps); !slices.Equal(got, tc.after) {
						t.Errorf("after the change, a new connection: plugins of %v, want %v", got, tc.after)
					}
				})
			}
		}
	}
}

// TestHookReadsRawDepsOnce: the pipelined list_deps and active_plugins of
// a hook share one read of the list_deps answer persisted as sent
// (depcache.SharedRead): once both have asked, the persisted entries can
// go and the hook is still served from that read, without computing the
// answer again (which would store it again); past
// depcache.VerifiedWindow, the entry is read again.
func TestHookReadsRawDepsOnce(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	cacheProject(t, ws)
	env := testEnv(t, nil)
	first, _ := listOn(t, liveConn(t, New(), ws, cache, env))
	entries := func() []string {
		t.Helper()
		var all []string
		for _, d := range []string{"deps", "deps-raw"} {
			got, err := filepath.Glob(filepath.Join(cache, Name, d, "*.cache"))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, got...)
		}
		return all
	}
	if n := len(entries()); n != 2 {
		t.Fatalf("%d persisted list_deps entries, want 2 (decoded and as sent)", n)
	}
	wantLocal := filepath.Join(ws, "local")

	p := newPM(t, ws, cache, nil)
	ctx := context.Background()
	var wg sync.WaitGroup
	var served bool
	var local map[string]string
	wg.Go(func() {
		_, ok, err := p.ListDepsRaw(ctx)
		served = ok && err == nil
	})
	wg.Go(func() { local = p.localTrees(ctx) })
	wg.Wait()
	if !served || local["local"] != wantLocal {
		t.Fatalf("pipelined hook: list_deps served as persisted %v, local trees %v (want local=%s)", served, local, wantLocal)
	}
	for _, f := range entries() {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.localTrees(ctx); got["local"] != wantLocal {
		t.Errorf("active_plugins again within the hook: local trees %v, want local=%s", got, wantLocal)
	}
	if _, ok, _ := p.ListDepsRaw(ctx); !ok {
		t.Errorf("list_deps again within the hook: not served from the shared read")
	}
	if got := entries(); len(got) != 0 {
		t.Fatalf("the persisted answer was read again within the hook (gone, it was computed and stored: %v)", got)
	}

	pastSharedRead()
	if _, ok, _ := p.ListDepsRaw(ctx); ok {
		t.Errorf("past %v list_deps was still served from the shared read of an entry since removed", depcache.VerifiedWindow)
	}
	if got := p.localTrees(ctx); got["local"] != wantLocal {
		t.Errorf("past the window: local trees %v, want local=%s", got, wantLocal)
	}
	deps, err := p.ListDeps(ctx)
	if err != nil || !slices.Equal(deps, first) {
		t.Errorf("past the window: list_deps %v, %v; want %v", deps, err, first)
	}
}

// TestEachProblemOncePerHook: on one connection, every hook reports a
// problem of the workspace once, whether list_deps and active_plugins are
// asked one after the other or at once (pipelined): list_deps computes
// its answer again at each hook, and active_plugins reuses it.
func TestEachProblemOncePerHook(t *testing.T) {
	for _, mode := range liveModes {
		for _, pipelined := range []bool{false, true} {
			name := mode.name + "/in turn"
			if pipelined {
				name = mode.name + "/pipelined"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ws := t.TempDir()
				cacheProject(t, ws)
				pyproject := filepath.Join(ws, "pyproject.toml")
				writeTree(t, ws, map[string]string{"pyproject.toml": "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\", \"bad name!\"]\n\n[tool.uv.sources]\nlocal = { path = \"local\" }\n"})
				cache := ""
				if mode.persisted {
					cache = t.TempDir()
				}
				c := liveConn(t, New(), ws, cache, testEnv(t, nil))
				deps := nowDeps(t, ws, testEnv(t, nil))
				for hook := range 3 {
					if hook > 0 {
						pastSharedRead()
					}
					var listDiags, pluginDiags []protocol.Diagnostic
					var plugins []string
					if pipelined {
						var wg sync.WaitGroup
						var listErr, pluginErr error
						var offers []protocol.Offer
						wg.Go(func() {
							var got []protocol.PackageID
							listDiags, listErr = c.CallDiagnostics(t.Context(), protocol.MethodListDeps, struct{}{}, &got)
						})
						wg.Go(func() {
							pluginDiags, pluginErr = c.CallDiagnostics(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &offers)
						})
						wg.Wait()
						if listErr != nil || pluginErr != nil {
							t.Fatalf("hook %d: list_deps: %v; active_plugins: %v", hook, listErr, pluginErr)
						}
						for _, o := range offers {
							plugins = append(plugins, o.ID.Name)
						}
					} else {
						_, listDiags = listOn(t, c)
						plugins, pluginDiags = pluginsOn(t, c, deps)
					}
					if !slices.Contains(plugins, "local") {
						t.Errorf("hook %d: plugins of %v, want local's among them", hook, plugins)
					}
					n := 0
					for _, d := range append(listDiags, pluginDiags...) {
						if d.File == pyproject {
							n++
						}
					}
					if n != 1 {
						t.Errorf("hook %d: %d diagnostics name %s, want 1 (list_deps: %v; active_plugins: %v)", hook, n, pyproject, listDiags, pluginDiags)
					}
				}
			})
		}
	}
}

// TestActivePluginsReusesComputedAnswer: a list_deps answer that is not
// persisted (it came with a diagnostic; or there is no cache directory) is
// not computed again by a later active_plugins while its inputs are
// unchanged, which would report its problem again; once an input changes,
// it is, and the problem is reported with the new answer.
func TestActivePluginsReusesComputedAnswer(t *testing.T) {
	const bad = "[project]\nname = \"app\"\nversion = \"0.1\"\ndependencies = [\"epplug\", \"tomlplug\", \"plain\", \"local\", \"bad name!\"]\n"
	for _, mode := range liveModes {
		t.Run(mode.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			cacheProject(t, ws)
			pyproject := filepath.Join(ws, "pyproject.toml")
			writeTree(t, ws, map[string]string{"pyproject.toml": bad + "\n[tool.uv.sources]\nlocal = { path = \"local\" }\n"})
			// Inputs changed this recently are not trusted to show their
			// next change: the answer would be computed again.
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
			cache := ""
			if mode.persisted {
				cache = t.TempDir()
			}
			env := testEnv(t, nil)
			c := liveConn(t, New(), ws, cache, env)
			deps, diags := listOn(t, c)
			if len(diags) != 1 || diags[0].File != pyproject {
				t.Fatalf("list_deps: diagnostics %v, want one naming %s", diags, pyproject)
			}
			count := func(diags []protocol.Diagnostic) int {
				n := 0
				for _, d := range diags {
					if d.File == pyproject {
						n++
					}
				}
				return n
			}
			pastSharedRead()
			plugins, diags := pluginsOn(t, c, deps)
			if !slices.Contains(plugins, "local") || count(diags) != 0 {
				t.Errorf("active_plugins alone, inputs unchanged: plugins of %v (want local's among them), %d diagnostics naming %s (want 0: list_deps' answer is reused)", plugins, count(diags), pyproject)
			}
			writeTree(t, ws, map[string]string{"pyproject.toml": bad})
			plugins, diags = pluginsOn(t, c, deps)
			if slices.Contains(plugins, "local") || count(diags) != 1 {
				t.Errorf("active_plugins alone, the path dependency removed: plugins of %v (want no local), %d diagnostics naming %s (want 1: computed again)", plugins, count(diags), pyproject)
			}
		})
	}
}
