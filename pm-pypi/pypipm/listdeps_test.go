package pypipm

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// testEnv is an environment that shields tests from the developer's own
// pip and virtualenv configuration.
func testEnv(t testing.TB, extra map[string]string) map[string]string {
	home := os.TempDir() // benchmarks: no temp dir per iteration
	if _, bench := t.(*testing.B); !bench {
		home = t.TempDir()
	}
	env := map[string]string{
		"VIRTUAL_ENV": "", "PIP_INDEX_URL": "", "PIP_EXTRA_INDEX_URL": "", "PIP_CONFIG_FILE": os.DevNull,
		"UV_INDEX_URL": "", "UV_DEFAULT_INDEX": "", "UV_INDEX": "", "UV_EXTRA_INDEX_URL": "",
		"HOME": home, "HTTP_PROXY": "", "HTTPS_PROXY": "", "http_proxy": "", "https_proxy": "",
		"ALL_PROXY": "", "all_proxy": "", "PIP_PROXY": "",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

func newPM(t testing.TB, ws, cache string, env map[string]string) *PM {
	t.Helper()
	p := New()
	err := p.Initialize(context.Background(), &pmserver.Session{
		ProtocolVersion: 1, Workspace: ws, CacheDir: cache, Env: pmserver.NewEnv(testEnv(t, env)),
		Logger: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testLogger(t testing.TB) *slog.Logger {
	if _, bench := t.(*testing.B); bench {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// unpack writes an archive's files (all but "want") under dir.
func unpack(t testing.TB, ar *txtar.Archive, dir string) string {
	t.Helper()
	want := ""
	for _, f := range ar.Files {
		if f.Name == "want" {
			want = string(f.Data)
			continue
		}
		p := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return want
}

func render(ids []protocol.PackageID) string {
	var b strings.Builder
	for _, id := range ids {
		fmt.Fprintf(&b, "%s %s\n", id.Name, id.Version)
	}
	return b.String()
}

// settle waits out depcache.RacyWindow after the inputs were written, so
// that an answer read from them is persisted.
func settle() { time.Sleep(depcache.RacyWindow + 20*time.Millisecond) }

// TestListDeps runs every testdata/listdeps/*.txtar workspace: its files
// are the workspace, its "want" section the expected name/version lines.
// Each is run cold, then warm from the persisted cache by a new PM.
func TestListDeps(t *testing.T) {
	files, _ := filepath.Glob("testdata/listdeps/*.txtar")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ws := t.TempDir()
			want := unpack(t, ar, ws)
			settle()
			cache := t.TempDir()
			var coldLocal map[string]string
			for _, run := range []string{"cold", "cached"} {
				p := newPM(t, ws, cache, nil)
				got, err := p.ListDeps(context.Background())
				if err != nil {
					t.Fatalf("%s: %v", run, err)
				}
				if render(got) != want {
					t.Errorf("%s:\n got:\n%s\nwant:\n%s", run, render(got), want)
				}
				for _, id := range got {
					if id.PM != "pypi" {
						t.Errorf("foreign pm in %v", id)
					}
				}
				// The source trees of path dependencies come back from
				// the cache too.
				local := p.localTrees(context.Background())
				if run == "cold" {
					coldLocal = local
				} else if !maps.Equal(local, coldLocal) {
					t.Errorf("cached local trees %v, cold %v", local, coldLocal)
				}
			}
			if entries := cacheEntries(t, cache); len(entries) != 1 {
				t.Errorf("persisted entries: %v", entries)
			}
		})
	}
}

// TestListDepsCacheInvalidation edits, adds and removes inputs and checks
// the persisted answer follows.
func TestListDepsCacheInvalidation(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(ws, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		// Make sure the mtime moves even on coarse clocks.
		future := time.Now().Add(time.Duration(len(body)) * time.Second)
		os.Chtimes(p, future, future)
		settle()
	}
	list := func() string {
		t.Helper()
		got, err := newPM(t, ws, cache, nil).ListDeps(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return render(got)
	}
	write("pyproject.toml", "[project]\nname = \"x\"\ndependencies = [\"a\", \"b\"]\n")
	if got := list(); got != "a *\nb *\n" {
		t.Fatalf("initial: %q", got)
	}
	write("requirements.txt", "a==1.0\n")
	if got := list(); got != "a 1.0\nb *\n" {
		t.Errorf("new requirements file not seen: %q", got)
	}
	write("uv.lock", "version = 1\n[[package]]\nname = \"a\"\nversion = \"2.0\"\n[[package]]\nname = \"b\"\nversion = \"3.0\"\n")
	if got := list(); got != "a 2.0\nb 3.0\n" {
		t.Errorf("new lockfile not seen: %q", got)
	}
	write("uv.lock", "version = 1\n[[package]]\nname = \"a\"\nversion = \"2.1\"\n[[package]]\nname = \"b\"\nversion = \"3.0\"\n\n")
	if got := list(); got != "a 2.1\nb 3.0\n" {
		t.Errorf("edited lockfile not seen: %q", got)
	}
	os.Remove(filepath.Join(ws, "uv.lock"))
	settle()
	if got := list(); got != "a 1.0\nb *\n" {
		t.Errorf("removed lockfile not seen: %q", got)
	}
	// A virtualenv appearing later supplies b.
	write(".venv/lib/python3.12/site-packages/b-3.3.dist-info/METADATA", "Name: b\nVersion: 3.3\n")
	if got := list(); got != "a 1.0\nb 3.3\n" {
		t.Errorf("new virtualenv not seen: %q", got)
	}
	write(".venv/lib/python3.12/site-packages/b-3.4.dist-info/METADATA", "Name: b\nVersion: 3.4\n")
	os.RemoveAll(filepath.Join(ws, ".venv/lib/python3.12/site-packages/b-3.3.dist-info"))
	settle()
	if got := list(); got != "a 1.0\nb 3.4\n" {
		t.Errorf("upgrade in virtualenv not seen: %q", got)
	}
	// The answer is read from the entry: one with no inputs is always
	// fresh, so its answer comes back as stored.
	entries := cacheEntries(t, cache)
	if len(entries) != 1 {
		t.Fatalf("persisted entries: %v", entries)
	}
	key := depsCacheKey + ws
	os.WriteFile(entries[0], depcache.Entry{Key: key, Value: []byte("{}\nzzz 9.9\n")}.Encode(), 0o644)
	if got := list(); got != "zzz 9.9\n" {
		t.Errorf("stored answer not used: %q", got)
	}
	// An entry that is garbage, or whose answer does not decode, is a
	// miss, not an error, and is replaced by a good one.
	for _, garbage := range [][]byte{
		[]byte("{garbage"),
		depcache.Entry{Key: key, Value: []byte("{garbage\nzzz 9.9\n")}.Encode(),
		depcache.Entry{Key: key, Value: []byte("{}\nzzz 9.9 extra\n")}.Encode(),
		depcache.Entry{Key: key, Value: []byte("{}")}.Encode(),
	} {
		os.WriteFile(entries[0], garbage, 0o644)
		if got := list(); got != "a 1.0\nb 3.4\n" {
			t.Errorf("after garbage cache %q: %q", garbage, got)
		}
		if data, _ := os.ReadFile(entries[0]); bytes.Equal(data, garbage) {
			t.Errorf("garbage entry %q not replaced", garbage)
		}
	}
}

// cacheEntries returns the persisted list_deps entries under cache.
func cacheEntries(t *testing.T, cache string) []string {
	t.Helper()
	entries, err := filepath.Glob(filepath.Join(cache, Name, "deps", "*.cache"))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// TestListDepsCacheEnv checks that an answer depending on a ${VAR} of a
// requirements file is reused only under the same value, which the entry
// holds by hash only.
func TestListDepsCacheEnv(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "requirements.txt"), []byte("a==${A_VERSION}\nb\n"), 0o644)
	settle()
	list := func(v string) string {
		t.Helper()
		got, err := newPM(t, ws, cache, map[string]string{"A_VERSION": v}).ListDeps(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return render(got)
	}
	for _, v := range []string{"1.0", "1.0", "2.0", "1.0"} {
		if got, want := list(v), "a "+v+"\nb *\n"; got != want {
			t.Errorf("A_VERSION=%s: %q, want %q", v, got, want)
		}
	}
	// The entry names the variable and the sha256 of its value.
	entries := cacheEntries(t, cache)
	if len(entries) != 1 {
		t.Fatalf("persisted entries: %v", entries)
	}
	data, _ := os.ReadFile(entries[0])
	e, err := depcache.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	head, deps, err := decodeDeps(e.Value)
	if err != nil || len(deps) != 2 || head.Env["A_VERSION"] != hashValue("1.0") {
		t.Errorf("entry %q: head %+v deps %v err %v", e.Value, head, deps, err)
	}
}

// TestListDepsNotCached checks that an answer depcache's compact form
// cannot hold is not persisted, and is still right every time.
func TestListDepsNotCached(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "pyproject.toml"), []byte("[project]\nname = \"x\"\ndependencies = [\"a\"]\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "uv.lock"), []byte("version = 1\n[[package]]\nname = \"a\"\nversion = \"1 odd\"\n"), 0o644)
	for range 2 {
		got, err := newPM(t, ws, cache, nil).ListDeps(context.Background())
		if err != nil || render(got) != "a 1 odd\n" {
			t.Errorf("got %q, %v", render(got), err)
		}
	}
	if entries := cacheEntries(t, cache); len(entries) != 0 {
		t.Errorf("persisted entries: %v", entries)
	}
}

func TestDepsEncoding(t *testing.T) {
	head := depsHead{Env: map[string]string{"VIRTUAL_ENV": hashValue("/v")}, Local: map[string]string{"lib": "/w/lib"}}
	deps := []protocol.PackageID{pkgID("a", "1.0"), pkgID("b", protocol.AnyVersion)}
	for _, tc := range []struct {
		head depsHead
		deps []protocol.PackageID
	}{{head, deps}, {depsHead{}, deps}, {depsHead{}, nil}, {head, []protocol.PackageID{}}} {
		data, ok := encodeDeps(tc.head, tc.deps)
		if !ok {
			t.Fatalf("encodeDeps(%+v, %v) refused", tc.head, tc.deps)
		}
		h, d, err := decodeDeps(data)
		if err != nil || !maps.Equal(h.Env, tc.head.Env) || !maps.Equal(h.Local, tc.head.Local) || !slices.Equal(d, tc.deps) || d == nil {
			t.Errorf("%q decoded to %+v %v %v", data, h, d, err)
		}
	}
	if _, ok := encodeDeps(depsHead{}, []protocol.PackageID{pkgID("a", "1 0")}); ok {
		t.Error("a version with a space encoded")
	}
}

func TestListDepsErrors(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "pyproject.toml"), []byte("[project\nname = 1"), 0o644)
	_, err := newPM(t, ws, t.TempDir(), nil).ListDeps(context.Background())
	if err == nil || !strings.Contains(err.Error(), "pyproject.toml") {
		t.Errorf("malformed pyproject.toml: %v", err)
	}
	// A malformed lockfile is a warning: the declarations still come back.
	os.WriteFile(filepath.Join(ws, "pyproject.toml"), []byte("[project]\nname = \"x\"\ndependencies = [\"a\"]\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "poetry.lock"), []byte("[[package]\n"), 0o644)
	got, err := newPM(t, ws, t.TempDir(), nil).ListDeps(context.Background())
	if err != nil || render(got) != "a *\n" {
		t.Errorf("malformed poetry.lock: %v %q", err, render(got))
	}
}

func TestVirtualEnvFromEnv(t *testing.T) {
	ws, ve := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "requirements.txt"), []byte("attrs\n"), 0o644)
	di := filepath.Join(ve, "lib", "python3.11", "site-packages", "attrs-23.1.0.dist-info")
	os.MkdirAll(di, 0o755)
	os.WriteFile(filepath.Join(di, "METADATA"), []byte("Name: attrs\nVersion: 23.1.0\n"), 0o644)
	cache := t.TempDir()
	got, err := newPM(t, ws, cache, map[string]string{"VIRTUAL_ENV": ve}).ListDeps(context.Background())
	if err != nil || render(got) != "attrs 23.1.0\n" {
		t.Errorf("VIRTUAL_ENV: %v %q", err, render(got))
	}
	// Another VIRTUAL_ENV is another answer, not the cached one.
	got, err = newPM(t, ws, cache, map[string]string{"VIRTUAL_ENV": t.TempDir()}).ListDeps(context.Background())
	if err != nil || render(got) != "attrs *\n" {
		t.Errorf("changed VIRTUAL_ENV: %v %q", err, render(got))
	}
}

func TestWorkspace(t *testing.T) {
	ar, err := txtar.ParseFile("testdata/listdeps/uv-workspace.txtar")
	if err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	unpack(t, ar, ws)
	res, err := newPM(t, ws, t.TempDir(), nil).Workspace(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Root != ws || len(res.Members) != 2 || res.Members[0] != (protocol.WorkspaceMember{Name: "app", Version: "0.1.0", Dir: ws}) ||
		res.Members[1] != (protocol.WorkspaceMember{Name: "app-lib", Version: "0.2.0", Dir: filepath.Join(ws, "packages", "lib")}) {
		t.Errorf("%+v", res)
	}
	res, err = newPM(t, t.TempDir(), t.TempDir(), nil).Workspace(context.Background())
	if err != nil || len(res.Members) != 0 {
		t.Errorf("empty workspace: %+v %v", res, err)
	}

	// A member whose pyproject.toml exists but cannot be read is left out
	// with a warning naming it, as list_deps says.
	bad := filepath.Join(ws, "packages", "broken", "pyproject.toml")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	p := newPM(t, ws, t.TempDir(), nil)
	var logs bytes.Buffer
	p.log = slog.New(slog.NewTextHandler(&logs, nil))
	res, err = p.Workspace(context.Background())
	if err != nil || len(res.Members) != 2 {
		t.Errorf("a member that cannot be read: %+v %v", res, err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), bad) {
		t.Errorf("no warning naming %s:\n%s", bad, logs.String())
	}
}
