package pypipm

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// faultSetup is a stalling-capable index, a workspace and a cache dir
// inside one temporary root.
func faultSetup(t *testing.T) (ix *fakeindex.Index, ws, cache string, initEnv map[string]string) {
	t.Helper()
	ix = demoIndex(t)
	root := t.TempDir()
	ws, cache = filepath.Join(root, "ws"), filepath.Join(root, "cache")
	os.MkdirAll(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "requirements.txt"), []byte("demo-plugin==1.0.0\nplain==0.5\n"), 0o644)
	return ix, ws, cache, map[string]string{"PIP_INDEX_URL": ix.URL}
}

func waitStalled(t *testing.T, ix *fakeindex.Index, p ...*pmtest.Proc) string {
	t.Helper()
	select {
	case name := <-ix.Stalled:
		return name
	case <-time.After(30 * time.Second):
		var stderr []string
		for _, q := range p {
			stderr = append(stderr, q.Stderr())
		}
		t.Fatalf("no download stalled in 30s; stderr:\n%s", strings.Join(stderr, "\n"))
		return ""
	}
}

// versionsIn lists the entries of <cache>/pypi/unpacked/<name>.
func versionsIn(cache, name string) []string {
	ents, _ := os.ReadDir(filepath.Join(cache, "pypi", unpackedDir, name))
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// oneTree returns the one tree unpacked for name@version in cache.
func oneTree(t *testing.T, cache, name, version string) string {
	t.Helper()
	dir := filepath.Join(cache, "pypi", unpackedDir, name, version)
	trees := treesIn(dir)
	if len(trees) != 1 {
		t.Fatalf("%s holds the trees %q, want one", dir, trees)
	}
	return filepath.Join(dir, trees[0])
}

// TestKillMidDownload SIGKILLs a real PM process while the index holds its
// wheel download halfway: no cache entry appears, the next process answers
// offline for update "none", then fetches the release, and sweeps the
// killed process's abandoned partial download once it is stale.
func TestKillMidDownload(t *testing.T) {
	ix, ws, cache, initEnv := faultSetup(t)
	ix.Stall.Store(true)
	p := startPM(t, baseProcEnv(t), ws, cache, initEnv)
	p.Send("fetch", fetchParams("demo-plugin", "1.0.0", "check"))
	if name := waitStalled(t, ix, p); !strings.HasPrefix(name, "demo_plugin-1.0.0") {
		t.Fatalf("stalled on %s", name)
	}
	p.Kill()

	if v := versionsIn(cache, "demo-plugin"); len(v) != 0 {
		t.Errorf("killed download left cache entries: %v", v)
	}
	var partial []string
	for _, f := range onlyDirs(treeOf(t, cache)) {
		if !strings.HasPrefix(f, "pypi/tmp/download-") {
			t.Errorf("killed download left %s", f)
		}
		partial = append(partial, filepath.Join(cache, filepath.FromSlash(f)))
	}
	if len(partial) != 1 {
		t.Fatalf("expected the killed process's partial download in pypi/tmp, found %v", partial)
	}
	// Age the abandoned partial file past staleAfter.
	old := time.Now().Add(-2 * staleAfter)
	for _, f := range partial {
		os.Chtimes(f, old, old)
	}

	ix.Unstall()
	q := startPM(t, baseProcEnv(t), ws, cache, initEnv)
	if r := q.Call("fetch", fetchParams("demo-plugin", "1.0.0", "none")); r.Code() != -32011 {
		t.Errorf("none after the killed download: %s", r.Raw)
	}
	r := q.Call("fetch", fetchParams("demo-plugin", "1.0.0", "check"))
	if r.Error != nil || !strings.Contains(string(r.Result), filepath.Join(cache, "pypi", unpackedDir, "demo-plugin", "1.0.0")) {
		t.Fatalf("fetch after the killed download: %s\n%s", r.Raw, q.Stderr())
	}
	if v := versionsIn(cache, "demo-plugin"); !slices.Equal(v, []string{"1.0.0"}) {
		t.Errorf("cache entries: %v", v)
	}
	for _, f := range partial {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("stale partial download %s not swept", f)
		}
	}
}

// TestTwoProcessesOneCopy holds two real PM processes' downloads of the
// same release halfway, so that both are certainly in flight together,
// then lets them finish: both succeed with the same root, and the cache
// holds exactly one copy and no leftovers.
func TestTwoProcessesOneCopy(t *testing.T) {
	ix, ws, cache, initEnv := faultSetup(t)
	ix.Stall.Store(true)
	a := startPM(t, baseProcEnv(t), ws, cache, initEnv)
	b := startPM(t, baseProcEnv(t), ws, cache, initEnv)
	ida := a.Send("fetch", fetchParams("demo-plugin", "*", "check"))
	idb := b.Send("fetch", fetchParams("Demo_Plugin", "==1.0.0", "fetch"))
	waitStalled(t, ix, a, b)
	waitStalled(t, ix, a, b)
	ix.Unstall()
	ra, rb := a.Wait(ida), b.Wait(idb)
	if ra.Error != nil || rb.Error != nil || string(ra.Result) != string(rb.Result) {
		t.Fatalf("concurrent fetches:\n%s\n%s\nstderr:\n%s\n%s", ra.Raw, rb.Raw, a.Stderr(), b.Stderr())
	}
	if v := versionsIn(cache, "demo-plugin"); !slices.Equal(v, []string{"1.0.0"}) {
		t.Errorf("cache entries after two fetches: %v", v)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "pypi", "tmp")); len(ents) != 0 {
		t.Errorf("downloads left behind: %d", len(ents))
	}
	if _, err := os.Stat(filepath.Join(oneTree(t, cache, "demo-plugin", "1.0.0"), "demo_plugin", "skills", "hello", "SKILL.md")); err != nil {
		t.Error(err)
	}
}

// TestCacheDirDeleted deletes cache_dir between calls on one connection of
// a real process, the way a user clearing caches would: every method keeps
// working and re-creates what it needs.
func TestCacheDirDeleted(t *testing.T) {
	_, ws, cache, initEnv := faultSetup(t)
	p := startPM(t, baseProcEnv(t), ws, cache, initEnv)
	ok := func(method string, params any) pmtest.Response {
		t.Helper()
		r := p.Call(method, params)
		if r.Error != nil {
			t.Fatalf("%s after the cache was deleted: %s\nstderr:\n%s", method, r.Raw, p.Stderr())
		}
		return r
	}
	wipe := func() {
		t.Helper()
		if err := os.RemoveAll(cache); err != nil {
			t.Fatal(err)
		}
	}
	first := ok("list_deps", map[string]any{})
	if !strings.Contains(string(first.Result), `"demo-plugin"`) {
		t.Fatalf("list_deps: %s", first.Raw)
	}
	wipe()
	if r := ok("list_deps", map[string]any{}); string(r.Result) != string(first.Result) {
		t.Errorf("list_deps changed: %s vs %s", r.Result, first.Result)
	}
	ok("fetch", fetchParams("demo-plugin", "1.0.0", "check"))
	wipe()
	if r := p.Call("fetch", fetchParams("demo-plugin", "1.0.0", "none")); r.Code() != -32011 {
		t.Errorf("none with the cache deleted: %s", r.Raw)
	}
	r := ok("fetch", fetchParams("demo-plugin", "1.0.0", "check"))
	if _, err := os.Stat(filepath.Join(oneTree(t, cache, "demo-plugin", "1.0.0"), "demo_plugin", "__init__.py")); err != nil {
		t.Errorf("re-fetched tree: %v (%s)", err, r.Raw)
	}
	wipe()
	if r := ok("load_plugin", map[string]any{"id": map[string]string{"pm": Name, "name": "demo-plugin", "version": "1.0.0"}}); !strings.Contains(string(r.Result), `"manifest"`) {
		t.Errorf("load_plugin: %s", r.Raw)
	}
	wipe()
	ok("refresh", map[string]any{"update": "fetch", "force": true})
	wipe()
	if r := ok("search", map[string]any{"query": "demo-plugin"}); !strings.Contains(string(r.Result), "demo-plugin") {
		t.Errorf("search: %s", r.Raw)
	}
	wipe()
	ok("active_plugins", map[string]any{"deps": []map[string]string{{"pm": Name, "name": "demo-plugin", "version": "1.0.0"}}})
	ok("list_deps", map[string]any{})
	wipe()
	p.Close()
	// A new process, cold, with the cache gone.
	q := startPM(t, baseProcEnv(t), ws, cache, initEnv)
	if r := q.Call("list_deps", map[string]any{}); r.Error != nil || string(r.Result) != string(first.Result) {
		t.Errorf("list_deps in a new process: %s", r.Raw)
	}
}

// TestStaleStagingSwept: the staging trees a process killed while unpacking
// leaves in <cache>/pypi/tmp (dot-named, so never served), and the
// temporary pointer files one killed while recording a verified sha256
// leaves beside the trees, are removed by the next download of that
// release once stale; fresh ones, possibly another process's work in
// progress, are left alone.
func TestStaleStagingSwept(t *testing.T) {
	ix := demoIndex(t)
	cache := t.TempDir()
	base := filepath.Join(cache, "pypi", unpackedDir, "demo-plugin", "1.0.0")
	tmp := filepath.Join(cache, "pypi", "tmp")
	stale, fresh := filepath.Join(base, ".tmp-latest-123"), filepath.Join(base, ".tmp-latest-456")
	staleStage := filepath.Join(tmp, ".demo-plugin-1.0.0-42")
	os.MkdirAll(base, 0o755)
	for _, f := range []string{stale, fresh} {
		os.WriteFile(f, []byte("half"), 0o644)
	}
	os.MkdirAll(filepath.Join(staleStage, "demo_plugin"), 0o755)
	os.WriteFile(filepath.Join(staleStage, "demo_plugin", "half.py"), []byte("x"), 0o644)
	old := time.Now().Add(-2 * staleAfter)
	os.Chtimes(stale, old, old)
	os.Chtimes(staleStage, old, old)
	p := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": ix.URL})
	if _, err := p.Fetch(t.Context(), id("demo-plugin", "1.0.0"), "check"); err != nil {
		t.Fatal(err)
	}
	if v := versionsIn(cache, "demo-plugin"); !slices.Equal(v, []string{"1.0.0"}) {
		t.Errorf("after the fetch: %v", v)
	}
	var got []string
	ents, _ := os.ReadDir(base)
	for _, e := range ents {
		if !validSHA256(e.Name()) {
			got = append(got, e.Name())
		}
	}
	if want := []string{".tmp-latest-456", p.indexPointer(nil)}; !slices.Equal(got, want) {
		t.Errorf("beside the tree after the fetch: %v, want %v", got, want)
	}
	if _, err := os.Stat(staleStage); err == nil {
		t.Error("stale staging tree in tmp not swept")
	}
}
