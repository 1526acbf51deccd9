package cargopm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// newPM returns an initialized PM for workspace with the given environment.
func newPM(t testing.TB, workspace string, env map[string]string) *PM {
	t.Helper()
	p := New()
	err := p.Initialize(context.Background(), &pmserver.Session{
		ProtocolVersion: 1,
		Workspace:       workspace,
		CacheDir:        filepath.Join(t.TempDir(), "cache"),
		Env:             pmserver.NewEnv(env),
		Logger:          slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func envMap(e *cargotest.Env) map[string]string {
	m := map[string]string{"CARGO": e.Cargo}
	for _, kv := range e.Vars {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func ids(s ...string) []protocol.PackageID {
	var out []protocol.PackageID
	for _, x := range s {
		n, v, _ := strings.Cut(x, "@")
		out = append(out, protocol.PackageID{PM: Name, Name: n, Version: v})
	}
	return out
}

func wantCode(t *testing.T, what string, err error, code protocol.Code) {
	t.Helper()
	if got := protocol.CodeOf(err); got != code {
		t.Errorf("%s: error %v (code %d), want code %d", what, err, got, code)
	}
}

func pluginCrates() []fakeregistry.Crate {
	return []fakeregistry.Crate{
		{Name: "skilled", Version: "1.0.0", Description: "has skills", Files: map[string]string{"skills/rust/SKILL.md": "---\nname: rust\ndescription: Rust help\n---\nBody\n"}},
		{Name: "metaplug", Version: "0.2.0", Metadata: "[package.metadata.symposium]\nname = \"meta-plugin\"\n"},
		{Name: "fileplug", Version: "2.0.0", Files: map[string]string{"SYMPOSIUM.toml": "name = \"file-plugin\"\n\n[[skills]]\nsource.path = \"guidance\"\n"}},
		{Name: "plain", Version: "1.0.0", Description: "no plugin here"},
		{Name: "badplug", Version: "1.0.0", Files: map[string]string{"SYMPOSIUM.toml": "name = \n"}},
		{Name: "yanky", Version: "1.0.0"},
		{Name: "yanky", Version: "1.1.0", Yanked: true},
		{Name: "pre", Version: "1.0.0"},
		{Name: "pre", Version: "2.0.0-beta.1"},
	}
}

func TestPMAgainstFakeRegistry(t *testing.T) {
	reg, err := fakeregistry.New(pluginCrates()...)
	if err != nil {
		t.Fatal(err)
	}
	defer reg.Close()
	env := cargotest.New(t, reg)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	cargotest.WriteFiles(t, dir, map[string]string{
		"ws/Cargo.toml": `[package]
name = "app"
version = "0.1.0"
edition = "2021"

[dependencies]
skilled = "1"
metaplug = "0.2"
fileplug = "2"
plain = "1"
badplug = "1"
localplug = { path = "../localplug" }
`,
		"ws/src/lib.rs": "",
		// As `cargo vendor` writes it for a git dependency, crates.io
		// staying on the loopback registry: cargo builds vendplug from
		// vendor/, so active_plugins looks there.
		"ws/.cargo/config.toml":             "[source.\"git+https://example.invalid/vendplug\"]\ngit = \"https://example.invalid/vendplug\"\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"vendor\"\n",
		"ws/vendor/vendplug/Cargo.toml":     "[package]\nname = \"vendplug\"\nversion = \"0.1.0\"\n",
		"ws/vendor/vendplug/SYMPOSIUM.toml": "name = \"vendored-plugin\"\n",
		"localplug/Cargo.toml":              "[package]\nname = \"localplug\"\nversion = \"0.5.0\"\nedition = \"2021\"\n\n[package.metadata.symposium.defaults]\nskills = false\n",
		"localplug/src/lib.rs":              "",
	})
	env.Run(t, ws, "fetch")
	p := newPM(t, ws, envMap(env))
	ctx := context.Background()

	deps, err := p.ListDeps(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := ids("badplug@1.0.0", "fileplug@2.0.0", "localplug@0.5.0", "metaplug@0.2.0", "plain@1.0.0", "skilled@1.0.0")
	if !slices.Equal(deps, want) {
		t.Fatalf("list_deps = %v, want %v", deps, want)
	}

	offers, err := p.ActivePlugins(ctx, append(deps, ids("vendplug@0.1.0", "notondisk@1.0.0")...))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]any{}
	for _, o := range offers {
		var m map[string]any
		if err := json.Unmarshal(o.Manifest, &m); err != nil {
			t.Fatal(err)
		}
		got[o.ID.Name+"@"+o.ID.Version] = m
		if !filepath.IsAbs(o.Root) {
			t.Errorf("%s: root %q is not absolute", o.ID, o.Root)
		}
		if _, err := os.Stat(filepath.Join(o.Root, "Cargo.toml")); err != nil {
			t.Errorf("%s: root %s has no Cargo.toml", o.ID, o.Root)
		}
	}
	names := map[string]string{
		"skilled@1.0.0": "skilled", "metaplug@0.2.0": "meta-plugin", "fileplug@2.0.0": "file-plugin",
		"badplug@1.0.0": "badplug", "localplug@0.5.0": "localplug", "vendplug@0.1.0": "vendored-plugin",
	}
	if len(got) != len(names) {
		t.Errorf("offers for %v, want %v", keys(got), names)
	}
	for k, name := range names {
		if got[k]["name"] != name {
			t.Errorf("%s: manifest name %v, want %s (manifest %v)", k, got[k]["name"], name, got[k])
		}
	}
	if sk, _ := json.Marshal(got["fileplug@2.0.0"]["skills"]); !strings.Contains(string(sk), "guidance") || !strings.Contains(string(sk), `"skills"`) {
		t.Errorf("fileplug skills = %s, want guidance then the default skills group", sk)
	}
	if _, ok := got["localplug@0.5.0"]["skills"]; ok {
		t.Errorf("localplug disabled default skills but got %v", got["localplug@0.5.0"]["skills"])
	}

	// fetch and load_plugin at each update level.
	fr, err := p.Fetch(ctx, ids("fileplug@*")[0], protocol.UpdateNone)
	if err != nil || fr.ID.Version != "2.0.0" || !strings.Contains(fr.Root, filepath.Join("registry", "src")) {
		t.Errorf("fetch fileplug none = %+v, %v", fr, err)
	}
	_, err = p.Fetch(ctx, ids("yanky@*")[0], protocol.UpdateNone)
	wantCode(t, "fetch yanky none", err, protocol.CodeOffline)
	for _, tc := range []struct {
		req, want string
		update    protocol.UpdateLevel
	}{
		{"*", "1.0.0", protocol.UpdateCheck},      // the yanked 1.1.0 is skipped
		{"=1.1.0", "1.1.0", protocol.UpdateCheck}, // unless pinned exactly
		{"=1.1.0", "1.1.0", protocol.UpdateNone},  // and now it is on disk
		{"1.0.0", "1.0.0", protocol.UpdateFetch},
	} {
		fr, err := p.Fetch(ctx, protocol.PackageID{PM: Name, Name: "yanky", Version: tc.req}, tc.update)
		if err != nil || fr.ID.Version != tc.want {
			t.Errorf("fetch yanky %s %s = %+v, %v; want %s", tc.req, tc.update, fr, err, tc.want)
		}
	}
	for req, want := range map[string]string{"*": "1.0.0", ">=2.0.0-beta.0": "2.0.0-beta.1", "2.0.0-beta.1": "2.0.0-beta.1"} {
		fr, err := p.Fetch(ctx, protocol.PackageID{PM: Name, Name: "pre", Version: req}, protocol.UpdateCheck)
		if err != nil || fr.ID.Version != want {
			t.Errorf("fetch pre %s = %+v, %v; want %s", req, fr, err, want)
		}
	}
	_, err = p.Fetch(ctx, ids("nosuchcrate@*")[0], protocol.UpdateCheck)
	wantCode(t, "fetch nosuchcrate", err, protocol.CodeNotFound)
	_, err = p.Fetch(ctx, ids("plain@3")[0], protocol.UpdateCheck)
	wantCode(t, "fetch plain@3", err, protocol.CodeNotFound)
	_, err = p.Fetch(ctx, protocol.PackageID{PM: "npm", Name: "plain", Version: "*"}, protocol.UpdateNone)
	wantCode(t, "fetch npm id", err, protocol.CodeForeignID)
	_, err = p.Fetch(ctx, ids("../etc@*")[0], protocol.UpdateNone)
	wantCode(t, "fetch bad name", err, protocol.CodeForeignID)
	_, err = p.Fetch(ctx, ids("plain@>>1")[0], protocol.UpdateNone)
	wantCode(t, "fetch bad requirement", err, protocol.CodeForeignID)

	lp, err := p.LoadPlugin(ctx, ids("plain@1")[0])
	if err != nil || len(lp) != 1 || lp[0].ID.Version != "1.0.0" || !strings.Contains(string(lp[0].Manifest), `"name":"plain"`) {
		t.Errorf("load_plugin plain = %+v, %v", lp, err)
	}

	hits, err := p.Search(ctx, "plug")
	if err != nil {
		t.Fatal(err)
	}
	var hitNames []string
	for _, h := range hits {
		hitNames = append(hitNames, h.ID.Name+"@"+h.ID.Version)
	}
	if strings.Join(hitNames, " ") != "badplug@1.0.0 fileplug@2.0.0 metaplug@0.2.0" {
		t.Errorf("search plug = %v", hitNames)
	}
	if uas := reg.UserAgents(); !strings.HasPrefix(uas[len(uas)-1], "symposium-pm-cargo") {
		t.Errorf("search User-Agent = %q, want one identifying symposium-pm-cargo", uas[len(uas)-1])
	}

	reg.SetDown(true)
	_, err = p.Search(ctx, "plug")
	wantCode(t, "search with the registry down", err, protocol.CodeRegistry)
	_, err = p.Fetch(ctx, ids("pre@*")[0], protocol.UpdateFetch)
	wantCode(t, "fetch with the registry down", err, protocol.CodeRegistry)
	reg.SetDown(false)
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestListDepsCache checks the persisted cache: a second PM answers from it,
// and touching a manifest, the lockfile or a globbed directory invalidates it.
func TestListDepsCache(t *testing.T) {
	dir := t.TempDir()
	cargotest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml":          "[workspace]\nmembers = [\"crates/*\"]\n",
		"crates/a/Cargo.toml": "[package]\nname = \"a\"\nversion = \"0.1.0\"\n[dependencies]\nserde = \"1\"\n",
		"Cargo.lock":          "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"0.1.0\"\ndependencies = [\"serde\"]\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
	})
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond) // settled: the answer is stored
	cache := t.TempDir()
	run := func() []protocol.PackageID {
		p := New()
		p.Initialize(context.Background(), &pmserver.Session{Workspace: dir, CacheDir: cache, Env: pmserver.NewEnv(nil), Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
		deps, err := p.ListDeps(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return deps
	}
	if got := run(); !slices.Equal(got, ids("serde@1.0.1")) {
		t.Fatalf("first = %v", got)
	}
	files, _ := filepath.Glob(filepath.Join(cache, "cargo", "deps", "*.cache"))
	if len(files) != 1 {
		t.Fatalf("cache files = %v", files)
	}
	// Poison the cached value: a hit must return it verbatim.
	data, _ := os.ReadFile(files[0])
	poisoned := strings.Replace(string(data), "\nserde 1.0.1\n", "\nserde 9.9.9\n", 1)
	os.WriteFile(files[0], []byte(poisoned), 0o644)
	if got := run(); !slices.Equal(got, ids("serde@9.9.9")) {
		t.Fatalf("cached answer not used: %v", got)
	}
	bump := func(p string) {
		future := time.Now().Add(time.Duration(len(p)) * time.Second)
		os.Chtimes(p, future, future)
	}
	bump(filepath.Join(dir, "Cargo.lock"))
	if got := run(); !slices.Equal(got, ids("serde@1.0.1")) {
		t.Fatalf("after touching Cargo.lock = %v", got)
	}
	cargotest.WriteFiles(t, dir, map[string]string{"crates/b/Cargo.toml": "[package]\nname = \"b\"\nversion = \"0.1.0\"\n[dependencies]\nlog = \"0.4\"\n"})
	bump(filepath.Join(dir, "crates"))
	if got := run(); !slices.Equal(got, ids("log@*", "serde@1.0.1")) {
		t.Fatalf("after adding a member = %v", got)
	}
	os.WriteFile(filepath.Join(dir, "crates", "b", "Cargo.toml"), []byte("[package]\nname = \"b\"\n[dependencies\n"), 0o644)
	if got := run(); !slices.Equal(got, ids("serde@1.0.1")) {
		t.Fatalf("with a broken member = %v", got)
	}
	os.Remove(filepath.Join(dir, "Cargo.lock"))
	if got := run(); !slices.Equal(got, ids("serde@*")) {
		t.Fatalf("without a lockfile = %v", got)
	}
	os.WriteFile(filepath.Join(dir, "Cargo.lock"), []byte("version = 4\n[[package]]\nname = \n"), 0o644)
	p := New()
	p.Initialize(context.Background(), &pmserver.Session{Workspace: dir, CacheDir: cache, Env: pmserver.NewEnv(nil)})
	if _, err := p.ListDeps(context.Background()); err == nil || !strings.Contains(err.Error(), "Cargo.lock:3") {
		t.Errorf("malformed lockfile: %v", err)
	}
}

func TestNoWorkspace(t *testing.T) {
	p := newPM(t, t.TempDir(), nil)
	deps, err := p.ListDeps(context.Background())
	if err != nil || len(deps) != 0 || deps == nil {
		t.Errorf("list_deps outside a workspace = %#v, %v", deps, err)
	}
	ws, err := p.Workspace(context.Background())
	if err != nil || len(ws.Members) != 0 {
		t.Errorf("workspace = %+v, %v", ws, err)
	}
}

// TestListDepsConcurrentCache runs several PMs on one cache directory at
// once: every answer is whole and no temporary file is left behind.
func TestListDepsConcurrentCache(t *testing.T) {
	dir := t.TempDir()
	cargotest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml": "[package]\nname = \"a\"\nversion = \"0.1.0\"\n[dependencies]\nserde = \"1\"\nlog = \"0.4\"\n",
		"Cargo.lock": "version = 4\n[[package]]\nname = \"a\"\nversion = \"0.1.0\"\ndependencies = [\"log\", \"serde\"]\n[[package]]\nname = \"log\"\nversion = \"0.4.2\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n[[package]]\nname = \"serde\"\nversion = \"1.0.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
	})
	cache := t.TempDir()
	want := ids("log@0.4.2", "serde@1.0.1")
	errs := make(chan error, 16)
	for range 16 {
		go func() {
			p := New()
			p.Initialize(context.Background(), &pmserver.Session{Workspace: dir, CacheDir: cache, Env: pmserver.NewEnv(nil)})
			got, err := p.ListDeps(context.Background())
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("got %v", got)
			}
			errs <- err
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(cache, "cargo", "deps", ".tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestSnapshotCacheParts checks that a cache hit serves workspace (which
// reads the part list_deps skips) and that a lockfile naming a dependency
// with a space, which the entry layout cannot hold, is answered but not
// persisted.
func TestSnapshotCacheParts(t *testing.T) {
	dir := t.TempDir()
	cargotest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml": "[package]\nname = \"a\"\nversion = \"0.1.0\"\n[dependencies]\nserde = \"1\"\n",
		"Cargo.lock": "version = 4\n\n[[package]]\nname = \"a\"\nversion = \"0.1.0\"\ndependencies = [\"serde\"]\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.1\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
	})
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond) // settled: the answer is stored
	cache := t.TempDir()
	newPM := func() *PM {
		p := New()
		p.Initialize(context.Background(), &pmserver.Session{Workspace: dir, CacheDir: cache, Env: pmserver.NewEnv(nil), Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
		return p
	}
	ctx := context.Background()
	if _, err := newPM().ListDeps(ctx); err != nil {
		t.Fatal(err)
	}
	ws, err := newPM().Workspace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ws.Root != dir || len(ws.Members) != 1 || ws.Members[0].Name != "a" || ws.Members[0].Version != "0.1.0" {
		t.Fatalf("workspace from the cache = %+v", ws)
	}

	os.WriteFile(filepath.Join(dir, "Cargo.lock"), []byte("version = 4\n\n[[package]]\nname = \"a\"\nversion = \"0.1.0\"\ndependencies = [\"serde\"]\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.1 evil\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n"), 0o644)
	future := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(dir, "Cargo.lock"), future, future)
	for range 2 {
		deps, err := newPM().ListDeps(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(deps) != 1 || deps[0].Version != "1.0.1 evil" {
			t.Fatalf("deps = %v", deps)
		}
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "cargo", "deps", "*.cache"))
	for _, e := range entries {
		if data, _ := os.ReadFile(e); strings.Contains(string(data), "evil") {
			t.Errorf("%s persists an answer its layout cannot hold:\n%s", e, data)
		}
	}
	if len(entries) != 1 {
		t.Errorf("cache entries %v, want the one from before the lockfile changed", entries)
	}
}

// askPM asks a PM opened on dir, with the cache directory cache ("" for
// none), for list_deps and the workspace members.
func askPM(t *testing.T, dir, cache string) ([]protocol.PackageID, []protocol.WorkspaceMember) {
	t.Helper()
	p := New()
	if err := p.Initialize(context.Background(), &pmserver.Session{ProtocolVersion: 1, Workspace: dir, CacheDir: cache, Env: pmserver.NewEnv(nil),
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))}); err != nil {
		t.Fatal(err)
	}
	deps, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ws, err := p.Workspace(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return deps, ws.Members
}

// touchLater gives path a modification time in the future, so that a
// rewrite within the file system's timestamp granularity is seen.
func touchLater(t *testing.T, path string) {
	t.Helper()
	future := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
}

// TestListDepsCacheSeesMemberBelowGlobLiteralTail: a member pattern whose
// last component is literal (ext/*/two) looks ext/a/two up by name under
// an ext/a that already existed; adding ext/a/two/Cargo.toml changes no
// listing the pattern's wildcard read (ext/), so the lookup itself must be
// a cache input for the cached answer to gain the new member.
func TestListDepsCacheSeesMemberBelowGlobLiteralTail(t *testing.T) {
	dir := t.TempDir()
	pkg := func(name, deps string) string {
		return "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\n\n[dependencies]\n" + deps
	}
	cargotest.WriteFiles(t, dir, map[string]string{
		"Cargo.toml":                "[workspace]\nresolver = \"2\"\nmembers = [\"ext/*/two\"]\n",
		"ext/nested/two/Cargo.toml": pkg("two", "fnv = \"1\"\n"),
		"ext/a/README.md":           "not a crate yet\n",
	})
	cache := t.TempDir()
	if deps, _ := askPM(t, dir, cache); !slices.Equal(deps, ids("fnv@*")) {
		t.Fatalf("before adding the member: %v", deps)
	}
	cargotest.WriteFiles(t, dir, map[string]string{"ext/a/two/Cargo.toml": pkg("newmember", "itoa = \"1\"\n")})
	touchLater(t, filepath.Join(dir, "ext", "a"))
	cold, coldMembers := askPM(t, dir, "")
	cached, cachedMembers := askPM(t, dir, cache)
	if !slices.Equal(cold, ids("fnv@*", "itoa@*")) || len(coldMembers) != 2 {
		t.Fatalf("cold answer after adding ext/a/two: %v, members %v", cold, coldMembers)
	}
	if !slices.Equal(cached, cold) || !slices.Equal(cachedMembers, coldMembers) {
		t.Errorf("after adding the member ext/a/two:\n cached list_deps %v, members %v\n cold   list_deps %v, members %v", cached, cachedMembers, cold, coldMembers)
	}
}

// TestListDepsPathDepVersionFromManifest: a path dependency outside the
// workspace bumps its version after Cargo.lock was written. cargo reads a
// path crate's manifest every time and answers its current version, so
// list_deps does too (Cargo.lock's 1.0.0 no longer exists), cached or not:
// the cached answer is stamped on that manifest. The oracle test
// TestOracleDebianPathDepBumpedAfterLock checks the same against cargo.
func TestListDepsPathDepVersionFromManifest(t *testing.T) {
	base := t.TempDir()
	outside := func(v string) string { return "[package]\nname = \"outside\"\nversion = \"" + v + "\"\n" }
	cargotest.WriteFiles(t, base, map[string]string{
		"ws/Cargo.toml":      "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\noutside = { path = \"../outside\" }\n",
		"ws/Cargo.lock":      "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"outside\"]\n\n[[package]]\nname = \"outside\"\nversion = \"1.0.0\"\n",
		"outside/Cargo.toml": outside("1.0.0"),
	})
	ws, cache := filepath.Join(base, "ws"), t.TempDir()
	if deps := persistBefore(t, ws, cache); !slices.Equal(deps, ids("outside@1.0.0")) {
		t.Fatalf("before the bump: %v", deps)
	}
	cargotest.WriteFiles(t, base, map[string]string{"outside/Cargo.toml": outside("1.1.0")})
	touchLater(t, filepath.Join(base, "outside", "Cargo.toml"))
	for _, c := range []string{"", cache} {
		if deps, _ := askPM(t, ws, c); !slices.Equal(deps, ids("outside@1.1.0")) {
			t.Errorf("after bumping ../outside to 1.1.0 (cache dir %q): list_deps %v, want outside@1.1.0 as cargo reads it", c, deps)
		}
	}
}
