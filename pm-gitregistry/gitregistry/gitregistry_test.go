package gitregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// fixture is a registry repository laid out like Symposium's
// recommendations registry, served over smart HTTP.
type fixture struct {
	repo   *gittest.Repo
	bare   string
	srv    *gittest.Server
	url    string
	commit string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	repo := gittest.NewRepo(t)
	copyTree(t, "testdata/recommendations", repo.Dir)
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("secret"), 0o644)
	repo.Write(map[string]string{
		"standalone/git-hygiene/escape.md": "->" + outside,
		"standalone/git-hygiene/up.md":     "->../../../../../../../../../etc/hostname",
		"standalone/git-hygiene/ok.md":     "->../../README.md",
	})
	os.Chmod(filepath.Join(repo.Dir, "rust/scripts/lint.sh"), 0o755)
	f := &fixture{repo: repo}
	f.commit = repo.Commit("registry")
	f.bare = repo.Bare()
	f.srv = gittest.Serve(t, filepath.Dir(f.bare))
	f.url = f.srv.URL + "/registry.git"
	return f
}

// push commits a change and pushes it to the served repository.
func (f *fixture) push(t *testing.T, write map[string]string, remove ...string) string {
	t.Helper()
	f.repo.Remove(remove...)
	f.repo.Write(write)
	c := f.repo.Commit("change")
	f.repo.Push(f.bare)
	return c
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func newPM(t *testing.T, cfg Config, cacheDir string, env map[string]string) (*PM, *pmtest.LogBuffer) {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "recs"
	}
	p := New(cfg)
	logs := &pmtest.LogBuffer{}
	err := p.Initialize(context.Background(), &pmserver.Session{
		ProtocolVersion: 1, Workspace: t.TempDir(), CacheDir: cacheDir,
		Env: pmserver.NewEnv(env), Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatalf("Initialize: %v", err)
	}
	t.Cleanup(func() { p.Close() })
	return p, logs
}

func code(err error) protocol.Code { return protocol.CodeOf(err) }

var wantEntries = []string{
	"group/data/pandas", "group/web/react", "group/web/vue", "legacy", "oldskill", "python",
	"rust", "standalone/git-hygiene", "wrongtype",
}

func offerNames(offers []protocol.Offer) []string {
	var out []string
	for _, o := range offers {
		out = append(out, o.ID.Name)
	}
	return out
}

func TestRecommendationsRegistry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, logs := newPM(t, Config{URL: f.url}, t.TempDir(), nil)

	// Never populated: nothing offered, nothing fetched, no network.
	if offers, err := p.ActivePlugins(ctx, nil); err != nil || len(offers) != 0 || offers == nil {
		t.Fatalf("active_plugins before refresh = %v, %v; want []", offers, err)
	}
	if hits, err := p.Search(ctx, ""); err != nil || len(hits) != 0 {
		t.Fatalf("search before refresh = %v, %v", hits, err)
	}
	id := protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}
	if _, err := p.Fetch(ctx, id, protocol.UpdateNone); code(err) != protocol.CodeOffline {
		t.Fatalf("fetch none before refresh: %v, want -32011", err)
	}
	if n := f.srv.Requests.Load(); n != 0 {
		t.Fatalf("update none made %d requests", n)
	}

	done, err := p.Refresh(ctx, protocol.UpdateCheck, false)
	if err != nil || !done {
		t.Fatalf("refresh = %v, %v", done, err)
	}
	offers, err := p.ActivePlugins(ctx, []protocol.PackageID{{PM: "recs", Name: "ignored", Version: "1"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := offerNames(offers); !slices.Equal(got, wantEntries) {
		t.Fatalf("entries\n got %v\nwant %v", got, wantEntries)
	}
	for _, o := range offers {
		if o.ID.PM != "recs" || o.ID.Version != f.commit {
			t.Errorf("id %v: want pm recs at commit %s", o.ID, f.commit)
		}
		if !filepath.IsAbs(o.Root) || !strings.HasSuffix(filepath.ToSlash(o.Root), "/"+f.commit+"/"+o.ID.Name) {
			t.Errorf("root %s of %s", o.Root, o.ID.Name)
		}
		if fi, err := os.Stat(o.Root); err != nil || !fi.IsDir() {
			t.Errorf("root %s: %v", o.Root, err)
		}
	}
	manifests := map[string]map[string]any{}
	for _, o := range offers {
		var m map[string]any
		if err := json.Unmarshal(o.Manifest, &m); err != nil {
			t.Fatalf("manifest of %s: %v", o.ID.Name, err)
		}
		manifests[o.ID.Name] = m
	}
	// Raw manifests: retired keys kept for the host to reject with a hint.
	if _, ok := manifests["legacy"]["crates"]; !ok {
		t.Errorf("legacy manifest lost its retired key: %v", manifests["legacy"])
	}
	if fmt.Sprint(manifests["legacy"]["skills"]) != "[map[crates:[serde] source:map[crate_path:skills]] map[source:crate]]" {
		t.Errorf("legacy skills: %v", manifests["legacy"]["skills"])
	}
	if manifests["wrongtype"]["predicates"] != "env(CI)" {
		t.Errorf("wrong-typed manifest not passed through raw: %v", manifests["wrongtype"])
	}
	if manifests["rust"]["name"] != "rust-guidance" {
		t.Errorf("rust manifest: %v", manifests["rust"])
	}
	// A bare skill becomes a synthesized plugin.
	py := manifests["python"]
	if py["name"] != "python-style" || fmt.Sprint(py["depends-on"]) != "[requests]" || fmt.Sprint(py["skills"]) != "[map[source:map[path:.]]]" {
		t.Errorf("synthesized skill plugin: %v", py)
	}
	// A bare skill with the retired crates key is offered, the key carried
	// into its manifest for the host to reject with the migration hint.
	if fmt.Sprint(manifests["oldskill"]["crates"]) != "[serde tokio]" || manifests["oldskill"]["name"] != "old-style" {
		t.Errorf("retired skill: %v", manifests["oldskill"])
	}
	// Entries that do not parse are reported on stderr, not offered.
	for _, want := range []string{"entry=broken", "entry=badskill", "invalid TOML", "offering registry entry raw; the host will reject it\" registry=recs entry=wrongtype"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, logs.String())
		}
	}
	// Links leaving the checkout are not followed; links inside are.
	skill := filepath.Join(offers[slices.Index(offerNames(offers), "standalone/git-hygiene")].Root)
	for _, gone := range []string{"escape.md", "up.md"} {
		if _, err := os.Lstat(filepath.Join(skill, gone)); !os.IsNotExist(err) {
			t.Errorf("%s: escaping link present (%v)", gone, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(skill, "ok.md")); err != nil || !strings.Contains(string(b), "recommendations") {
		t.Errorf("inside link: %q %v", b, err)
	}
	rustRoot := offers[slices.Index(offerNames(offers), "rust")].Root
	if fi, err := os.Stat(filepath.Join(rustRoot, "scripts/lint.sh")); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("hook script not executable: %v %v", fi, err)
	}
}

func TestSearch(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, _ := newPM(t, Config{URL: f.bare}, t.TempDir(), nil)
	if _, err := p.Refresh(ctx, protocol.UpdateFetch, false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"", wantEntries},
		{"GROUP/WEB", []string{"group/web/react", "group/web/vue"}}, // path
		{"React-Tools", []string{"group/web/react"}},                // plugin name
		{"small, focused", []string{"standalone/git-hygiene"}},      // skill description
		{"pep 8", []string{"python"}},
		{"BORROWING", []string{"rust"}}, // a skill inside a plugin's group
		{"python-STYLE", []string{"python"}},
		{"no such thing", nil},
		{"broken", nil}, // entries that do not load are not found
	} {
		hits, err := p.Search(ctx, tc.q)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID.Name)
			if h.ID.PM != "recs" || h.ID.Version != f.commit {
				t.Errorf("hit id %v", h.ID)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("search %q = %v, want %v", tc.q, got, tc.want)
		}
	}
	hits, _ := p.Search(ctx, "hygiene")
	if len(hits) != 1 || hits[0].Description != "Write Small, Focused Commits" {
		t.Errorf("description: %+v", hits)
	}
}

// TestSearchBestMatchesFirst: search lists the best matches first
// (protocol §6.6): a plugin named as the query before one whose name begins
// with it, before one whose name contains it, before one whose path
// contains it, before one whose description does, ties by path — not in
// entry path order.
func TestSearchBestMatchesFirst(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(map[string]string{
		"aaa/helper/SKILL.md":    "---\nname: helper\ndescription: keeps a desk tidy-ish\n---\n",
		"bbb/untidy/SKILL.md":    "---\nname: untidy\ndescription: the opposite\n---\n",
		"ccc/tidy-desk/SKILL.md": "---\nname: tidy-desk\ndescription: desks\n---\n",
		"tidy/other/SKILL.md":    "---\nname: other\ndescription: no match but its path\n---\n",
		"yy/Tidy/SKILL.md":       "---\nname: sweeper\ndescription: named Tidy by its directory\n---\n",
		"zz/tidy/SKILL.md":       "---\nname: TIDY\ndescription: Tidy things\n---\n",
	})
	repo.Commit("r")
	ctx := context.Background()
	p, _ := newPM(t, Config{URL: repo.Bare()}, t.TempDir(), nil)
	if _, err := p.Refresh(ctx, protocol.UpdateFetch, false); err != nil {
		t.Fatal(err)
	}
	hits, err := p.Search(ctx, "tidy")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.ID.Name)
	}
	want := []string{"yy/Tidy", "zz/tidy", "ccc/tidy-desk", "bbb/untidy", "tidy/other", "aaa/helper"}
	if !slices.Equal(got, want) {
		t.Fatalf("search \"tidy\" = %v, want %v (best matches first)", got, want)
	}
}

// TestLoadPluginUnknownNameNotFound: load_plugin of a name that is neither
// an entry nor a plugin's name answers -32010 (protocol §6.3), the error
// fetch of the same id gives, not [].
func TestLoadPluginUnknownNameNotFound(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, _ := newPM(t, Config{URL: f.bare}, t.TempDir(), nil)
	if _, err := p.Refresh(ctx, protocol.UpdateFetch, false); err != nil {
		t.Fatal(err)
	}
	id := protocol.PackageID{PM: "recs", Name: "nothing", Version: "*"}
	_, ferr := p.Fetch(ctx, id, protocol.UpdateNone)
	offers, lerr := p.LoadPlugin(ctx, id)
	if code(lerr) != protocol.CodeNotFound || code(ferr) != protocol.CodeNotFound || lerr.Error() != ferr.Error() {
		t.Fatalf("load_plugin of a name that is no entry: %v, %v; want -32010 as fetch answers: %v", offers, lerr, ferr)
	}
}

func TestLoadPluginAndFetch(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, _ := newPM(t, Config{URL: f.url}, t.TempDir(), nil)

	// load_plugin clones a never-populated registry on first need.
	offers, err := p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "group/web/react", Version: "*"})
	if err != nil || len(offers) != 1 || offers[0].ID.Version != f.commit {
		t.Fatalf("load by path: %+v %v", offers, err)
	}
	byName, err := p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "react-tools", Version: f.commit})
	if err != nil || len(byName) != 1 || byName[0].ID.Name != "group/web/react" || byName[0].Root != offers[0].Root {
		t.Fatalf("load by plugin name and commit: %+v %v", byName, err)
	}
	// A name that is no entry is -32010 (protocol §6.3), the same answer
	// as fetch's (TestLoadPluginUnknownNameNotFound).
	if got, err := p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "nothing", Version: "*"}); code(err) != protocol.CodeNotFound {
		t.Fatalf("load of a missing entry: %+v %v, want -32010", got, err)
	}
	// An entry that cannot be read: load_plugin and fetch give the same
	// -32014 naming it and the problem (fetch used to hand out its root).
	for _, name := range []string{"broken", "badskill"} {
		id := protocol.PackageID{PM: "recs", Name: name, Version: "*"}
		_, lerr := p.LoadPlugin(ctx, id)
		res, ferr := p.Fetch(ctx, id, protocol.UpdateNone)
		if code(lerr) != protocol.CodeInvalidContent || code(ferr) != protocol.CodeInvalidContent || lerr.Error() != ferr.Error() ||
			!strings.Contains(lerr.Error(), "entry "+name+" at commit "+f.commit+" cannot be read") {
			t.Fatalf("unreadable entry %s: load_plugin %v; fetch %+v %v; want the same -32014", name, lerr, res, ferr)
		}
	}
	// An entry offered raw for the host to reject: both answer it.
	if got, err := p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "legacy", Version: "*"}); err != nil || len(got) != 1 {
		t.Fatalf("load of a raw entry: %+v %v", got, err)
	}
	if res, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "legacy", Version: "*"}, protocol.UpdateNone); err != nil || res.ID.Name != "legacy" {
		t.Fatalf("fetch of a raw entry: %+v %v", res, err)
	}
	if _, err := p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "^1.0"}); code(err) != protocol.CodeNotFound {
		t.Fatalf("load with a non-commit version: %v, want -32010", err)
	}
	if _, err := p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: strings.Repeat("0", 40)}); code(err) != protocol.CodeNotFound {
		t.Fatalf("load at an unknown commit: %v, want -32010", err)
	}
	// Abbreviated commit ids are refused everywhere, with the full id when
	// the prefix is the current commit's.
	for _, v := range []string{f.commit[:7], f.commit[:10], f.commit[:39], "abcdef1"} {
		id := protocol.PackageID{PM: "recs", Name: "rust", Version: v}
		_, lerr := p.LoadPlugin(ctx, id)
		_, ferr := p.Fetch(ctx, id, protocol.UpdateCheck)
		for _, err := range []error{lerr, ferr} {
			if code(err) != protocol.CodeNotFound || !strings.Contains(err.Error(), "abbreviated commit id") || !strings.Contains(err.Error(), "full 40-digit commit id") {
				t.Fatalf("version %s: %v, want -32010 refusing the abbreviation", v, err)
			}
			if strings.HasPrefix(f.commit, v) != strings.Contains(err.Error(), "abbreviates the current commit "+f.commit) {
				t.Fatalf("version %s: %v: the hint about the current commit is wrong", v, err)
			}
		}
	}

	for _, level := range []protocol.UpdateLevel{protocol.UpdateNone, protocol.UpdateCheck, protocol.UpdateFetch} {
		res, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "python-style", Version: "*"}, level)
		if err != nil {
			t.Fatalf("fetch %s: %v", level, err)
		}
		if res.ID.Name != "python" || res.ID.Version != f.commit {
			t.Fatalf("fetch %s id %v", level, res.ID)
		}
		if _, err := os.Stat(filepath.Join(res.Root, "SKILL.md")); err != nil {
			t.Fatalf("fetch %s root: %v", level, err)
		}
	}
	if _, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "nope", Version: "*"}, protocol.UpdateNone); code(err) != protocol.CodeNotFound {
		t.Fatalf("fetch missing entry: %v", err)
	}

	// A commit from the past is fetched from the remote at check, refused offline.
	old := f.commit
	newer := f.push(t, map[string]string{"fresh/SKILL.md": "---\nname: fresh\ndescription: New\n---\n"})
	if _, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "fresh", Version: newer}, protocol.UpdateNone); code(err) != protocol.CodeOffline {
		t.Fatalf("fetch of an uncached commit at none: %v, want -32011", err)
	}
	res, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "fresh", Version: newer}, protocol.UpdateCheck)
	if err != nil || res.ID.Version != newer {
		t.Fatalf("fetch of a new commit at check: %+v %v", res, err)
	}
	res, err = p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: old}, protocol.UpdateNone)
	if err != nil || res.ID.Version != old {
		t.Fatalf("fetch of the old commit: %+v %v", res, err)
	}
}

func TestRefreshWhileRootsInUse(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, _ := newPM(t, Config{URL: f.url}, t.TempDir(), nil)
	if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
		t.Fatal(err)
	}
	before, _ := p.ActivePlugins(ctx, nil)

	// Unchanged remote: check asks once (ls-remote), fetches nothing, and
	// answers that nothing changed.
	n := f.srv.Requests.Load()
	if done, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil || done {
		t.Fatal(done, err)
	}
	if d := f.srv.Requests.Load() - n; d != 1 {
		t.Fatalf("unchanged check made %d requests", d)
	}

	c2 := f.push(t, map[string]string{"python/SKILL.md": "---\nname: python-style\ndescription: Changed\n---\n"}, "group")
	if done, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil || !done {
		t.Fatal(done, err)
	}
	after, _ := p.ActivePlugins(ctx, nil)
	if slices.Contains(offerNames(after), "group/web/react") || after[0].ID.Version != c2 {
		t.Fatalf("after refresh: %v", offerNames(after))
	}
	// Every root handed out before the refresh is intact.
	for _, o := range before {
		if _, err := os.Stat(o.Root); err != nil {
			t.Fatalf("old root %s gone: %v", o.Root, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(before[slices.Index(offerNames(before), "python")].Root, "SKILL.md"))
	if strings.Contains(string(b), "Changed") {
		t.Fatal("old root was modified in place")
	}

	// A new process starting while this one is alive keeps the old commit.
	cache := filepath.Dir(filepath.Dir(p.cache.Path()))
	q, _ := newPM(t, Config{URL: f.url}, cache, nil)
	if _, err := q.ActivePlugins(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(before[0].Root); err != nil {
		t.Fatalf("old root collected while in use: %v", err)
	}
	// Once every user is gone, a later start collects it.
	p.Close()
	q.Close()
	r, _ := newPM(t, Config{URL: f.url}, cache, nil)
	got, _ := r.ActivePlugins(ctx, nil)
	if len(got) == 0 || got[0].ID.Version != c2 {
		t.Fatalf("after restart: %v", got)
	}
	if _, err := os.Stat(before[0].Root); !os.IsNotExist(err) {
		t.Fatalf("old root not collected at a later start: %v", err)
	}
}

func TestUpdateLevelsAndAutoUpdate(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cache := t.TempDir()
	p, _ := newPM(t, Config{URL: f.url, NoAutoUpdate: true}, cache, nil)

	if done, err := p.Refresh(ctx, protocol.UpdateFetch, false); err != nil || done {
		t.Fatalf("unforced refresh with auto-update off = %v, %v; want false", done, err)
	}
	if _, err := p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}); code(err) != protocol.CodeOffline {
		t.Fatalf("load_plugin with auto-update off and nothing cached: %v, want -32011", err)
	}
	if n := f.srv.Requests.Load(); n != 0 {
		t.Fatalf("auto-update off made %d requests", n)
	}
	if done, err := p.Refresh(ctx, protocol.UpdateNone, true); err != nil || done {
		t.Fatalf("refresh none = %v, %v; want false", done, err)
	}
	if n := f.srv.Requests.Load(); n != 0 {
		t.Fatalf("refresh none made %d requests", n)
	}
	if done, err := p.Refresh(ctx, protocol.UpdateCheck, true); err != nil || !done {
		t.Fatalf("forced refresh = %v, %v", done, err)
	}
	// Update none serves the cache and never touches the network.
	n := f.srv.Requests.Load()
	f.push(t, map[string]string{"later/SKILL.md": "---\nname: later\ndescription: L\n---\n"})
	offers, _ := p.ActivePlugins(ctx, nil)
	p.Search(ctx, "x")
	p.LoadPlugin(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"})
	res, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}, protocol.UpdateNone)
	if err != nil || res.ID.Version != f.commit || len(offers) != len(wantEntries) {
		t.Fatalf("offline reads: %v %v", res, err)
	}
	if d := f.srv.Requests.Load() - n; d != 0 {
		t.Fatalf("update none made %d requests", d)
	}
	// fetch at check sees the push; the registry moves on.
	res, err = p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "later", Version: "*"}, protocol.UpdateCheck)
	if err != nil || res.ID.Version == f.commit {
		t.Fatalf("fetch check after push: %+v %v", res, err)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	t.Run("unreachable", func(t *testing.T) {
		p, _ := newPM(t, Config{URL: "http://127.0.0.1:1/nothing.git"}, t.TempDir(), nil)
		if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); code(err) != protocol.CodeRegistry {
			t.Fatalf("refresh: %v, want -32012", err)
		}
		_, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}, protocol.UpdateCheck)
		if code(err) != protocol.CodeRegistry || !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Fatalf("fetch: %v, want -32012 naming the URL", err)
		}
	})
	t.Run("proxy-from-env", func(t *testing.T) {
		// The registry's host only exists behind the proxy named in the
		// initialize env.
		var proxied atomic.Int64
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Host != "registry.invalid" {
				http.Error(w, "unknown host "+r.URL.Host, http.StatusBadGateway)
				return
			}
			proxied.Add(1)
			out, _ := http.NewRequest(r.Method, f.srv.URL+r.URL.RequestURI(), r.Body)
			out.ContentLength = r.ContentLength
			out.Header = r.Header.Clone()
			resp, err := http.DefaultTransport.RoundTrip(out)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			defer resp.Body.Close()
			for k, v := range resp.Header {
				w.Header()[k] = v
			}
			w.WriteHeader(resp.StatusCode)
			io.Copy(w, resp.Body)
		}))
		defer proxy.Close()
		p, _ := newPM(t, Config{URL: "http://registry.invalid/registry.git"}, t.TempDir(), map[string]string{"HTTP_PROXY": proxy.URL, "NO_PROXY": ""})
		if _, err := p.Refresh(ctx, protocol.UpdateFetch, false); err != nil {
			t.Fatalf("refresh through the proxy: %v", err)
		}
		if proxied.Load() == 0 {
			t.Fatal("the proxy saw no request")
		}
		if offers, _ := p.ActivePlugins(ctx, nil); len(offers) != len(wantEntries) {
			t.Fatalf("offers through the proxy: %v", offerNames(offers))
		}
	})
	t.Run("server-error", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		}))
		defer srv.Close()
		p, _ := newPM(t, Config{URL: srv.URL + "/reg.git"}, t.TempDir(), nil)
		_, err := p.Refresh(ctx, protocol.UpdateCheck, false)
		var pe *protocol.Error
		var data protocol.RegistryData
		if !errors.As(err, &pe) || pe.Code != protocol.CodeRegistry || pe.DecodeData(&data) != nil || data.Status != http.StatusServiceUnavailable {
			t.Fatalf("refresh against a 503: %v (data %+v)", err, data)
		}
	})
	t.Run("missing-ref", func(t *testing.T) {
		p, _ := newPM(t, Config{URL: f.url, Ref: "no-such-branch"}, t.TempDir(), nil)
		_, err := p.Refresh(ctx, protocol.UpdateCheck, false)
		if code(err) != protocol.CodeRegistry || !strings.Contains(err.Error(), "no-such-branch") {
			t.Fatalf("refresh: %v", err)
		}
		_, err = p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}, protocol.UpdateFetch)
		if code(err) != protocol.CodeNotFound {
			t.Fatalf("fetch: %v, want -32010", err)
		}
	})
	t.Run("check-falls-back-to-cache", func(t *testing.T) {
		cache := t.TempDir()
		p, _ := newPM(t, Config{URL: f.bare}, cache, nil)
		if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
			t.Fatal(err)
		}
		os.Rename(f.bare, f.bare+".moved")
		defer os.Rename(f.bare+".moved", f.bare)
		res, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}, protocol.UpdateCheck)
		if err != nil || res.ID.Version != f.commit {
			t.Fatalf("check with the remote gone: %+v %v", res, err)
		}
		if _, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}, protocol.UpdateFetch); code(err) != protocol.CodeRegistry {
			t.Fatalf("fetch with the remote gone: %v, want -32012", err)
		}
	})
	t.Run("half-deleted-cache", func(t *testing.T) {
		cache := t.TempDir()
		p, _ := newPM(t, Config{URL: f.url}, cache, nil)
		if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
			t.Fatal(err)
		}
		dir := p.cache.Path()
		os.RemoveAll(filepath.Join(dir, "repo", "objects"))
		os.RemoveAll(filepath.Join(dir, "commits"))
		p.indexes = map[string]*index{}
		if offers, err := p.ActivePlugins(ctx, nil); err != nil || len(offers) != 0 {
			t.Fatalf("active_plugins on a gutted cache: %v %v, want []", offers, err)
		}
		if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
			t.Fatalf("refresh did not repair: %v", err)
		}
		if offers, _ := p.ActivePlugins(ctx, nil); len(offers) != len(wantEntries) {
			t.Fatalf("after repair: %v", offerNames(offers))
		}
	})
	for _, gone := range []string{"rust", "group/web/react"} {
		t.Run("damaged-commit/"+gone, func(t *testing.T) {
			cache := t.TempDir()
			p, _ := newPM(t, Config{URL: f.url}, cache, nil)
			if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
				t.Fatal(err)
			}
			offers, _ := p.ActivePlugins(ctx, nil)
			p.Close()
			// Part of the commit's tree deleted behind the PM's back; the
			// persisted index still lists it.
			rust := offers[slices.Index(offerNames(offers), gone)].Root
			os.RemoveAll(rust)
			q, logs := newPM(t, Config{URL: f.url}, cache, nil)
			n := f.srv.Requests.Load()
			again, err := q.ActivePlugins(ctx, nil)
			if err != nil || !slices.Equal(offerNames(again), wantEntries) {
				t.Fatalf("after damage: %v %v", offerNames(again), err)
			}
			// Rebuilt in a repaired copy of the commit's directory: the
			// damaged one is left as it is, for the roots handed out of it
			// (TestRepairKeepsOtherConnectionsRoots).
			if root := rootsByName(again)[gone]; root == rust {
				t.Fatalf("damaged entry offered at its damaged root %s", root)
			} else if _, err := os.Stat(filepath.Join(root, "SYMPOSIUM.toml")); err != nil {
				t.Fatalf("damaged entry not rebuilt: %v", err)
			}
			if !strings.Contains(logs.String(), "damaged") {
				t.Fatalf("no warning:\n%s", logs.String())
			}
			if d := f.srv.Requests.Load() - n; d != 0 {
				t.Fatalf("the repair used the network (%d requests)", d)
			}
		})
	}
	t.Run("config", func(t *testing.T) {
		for _, tc := range []struct {
			cfg  Config
			want string
		}{
			{Config{Name: "x"}, "no URL"},
			{Config{Name: "x", URL: f.url, Subdir: "../up"}, "subdir"},
		} {
			err := New(tc.cfg).Initialize(ctx, &pmserver.Session{CacheDir: t.TempDir(), Env: pmserver.NewEnv(map[string]string{EnvURL: ""})})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
			}
		}
		// Name has no side effect: asked before Initialize (as --help
		// does), it gives the default, and a name only in the initialize env
		// is still the one announced afterwards.
		p := New(Config{URL: f.url})
		if p.Name() != "gitregistry" {
			t.Fatalf("default name %q", p.Name())
		}
		if err := p.Initialize(ctx, &pmserver.Session{CacheDir: t.TempDir(), Env: pmserver.NewEnv(map[string]string{EnvName: "team"})}); err != nil || p.Name() != "team" {
			t.Errorf("name from the initialize env after an early Name: %q %v", p.Name(), err)
		}
		err := New(Config{Name: "x", URL: f.url}).Initialize(ctx, &pmserver.Session{CacheDir: t.TempDir(), Env: pmserver.NewEnv(map[string]string{EnvNoAutoUpdate: "maybe"})})
		if err == nil || !strings.Contains(err.Error(), EnvNoAutoUpdate) {
			t.Errorf("bad %s: %v", EnvNoAutoUpdate, err)
		}
	})
}

func TestEnvConfigAndSubdir(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, _ := newPM(t, Config{}, t.TempDir(), map[string]string{
		EnvURL: f.url, EnvSubdir: "group", EnvRef: "main", EnvNoAutoUpdate: "false",
	})
	if p.cfg.URL != f.url || p.cfg.Subdir != "group" || p.cfg.Ref != "main" {
		t.Fatalf("config from env: %+v", p.cfg)
	}
	if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
		t.Fatal(err)
	}
	offers, _ := p.ActivePlugins(ctx, nil)
	if got := offerNames(offers); !slices.Equal(got, []string{"data/pandas", "web/react", "web/vue"}) {
		t.Fatalf("subdir entries: %v", got)
	}
	if _, err := os.Stat(filepath.Join(offers[0].Root, "..", "..", "..", "rust")); !os.IsNotExist(err) {
		t.Fatalf("subdir checkout holds the rest of the repository: %v", err)
	}
}

// TestTwoInstancesShareCache runs two PMs on one cache at once, as two
// processes would (the locks are per open file, so they exclude each other
// within one process too).
func TestTwoInstancesShareCache(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	cache := t.TempDir()
	a, _ := newPM(t, Config{URL: f.url}, cache, nil)
	b, _ := newPM(t, Config{URL: f.url}, cache, nil)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for _, p := range []*PM{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, lvl := range []protocol.UpdateLevel{protocol.UpdateFetch, protocol.UpdateCheck} {
				if _, err := p.Refresh(ctx, lvl, false); err != nil {
					errs <- err
				}
				if offers, err := p.ActivePlugins(ctx, nil); err != nil || len(offers) != len(wantEntries) {
					errs <- fmt.Errorf("active_plugins: %d offers, %v", len(offers), err)
				}
				if _, err := p.Search(ctx, "tidy"); err != nil {
					errs <- err
				}
				if _, err := p.Fetch(ctx, protocol.PackageID{PM: "recs", Name: "rust", Version: "*"}, protocol.UpdateNone); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestSplitTreeURL(t *testing.T) {
	for _, tc := range []struct {
		in, want Config
	}{
		{Config{URL: "https://github.com/symposium-dev/recommendations"}, Config{URL: "https://github.com/symposium-dev/recommendations"}},
		{Config{URL: "https://github.com/o/r/tree/main"}, Config{URL: "https://github.com/o/r", Ref: "main"}},
		{Config{URL: "https://GitHub.com/o/r/tree/v2/plugins/rust/"}, Config{URL: "https://GitHub.com/o/r", Ref: "v2", Subdir: "plugins/rust"}},
		{Config{URL: "https://github.com/o/r/tree/main/x", Ref: "dev", Subdir: "y"}, Config{URL: "https://github.com/o/r", Ref: "dev", Subdir: "y"}},
		{Config{URL: "https://github.com/o/r/blob/main/x"}, Config{URL: "https://github.com/o/r/blob/main/x"}},
		{Config{URL: "https://example.com/o/r/tree/main"}, Config{URL: "https://example.com/o/r/tree/main"}},
		{Config{URL: "git@github.com:o/r.git"}, Config{URL: "git@github.com:o/r.git"}},
	} {
		if got := splitTreeURL(tc.in); got != tc.want {
			t.Errorf("splitTreeURL(%+v) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// TestRefreshAnswersChange: refresh answers whether the commit served
// changed, at check and at fetch alike (issue 17: check answered true when
// the ref had not moved).
func TestRefreshAnswersChange(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	p, _ := newPM(t, Config{URL: f.url}, t.TempDir(), nil)
	step := func(level protocol.UpdateLevel, want bool, what string) {
		t.Helper()
		if got, err := p.Refresh(ctx, level, false); err != nil || got != want {
			t.Fatalf("%s: refresh %s = %v, %v; want %v", what, level, got, err, want)
		}
	}
	step(protocol.UpdateCheck, true, "first refresh")
	step(protocol.UpdateCheck, false, "ref not moved")
	step(protocol.UpdateFetch, false, "ref not moved, fetched anyway")
	f.push(t, map[string]string{"later/SKILL.md": "---\nname: later\ndescription: L\n---\n"})
	step(protocol.UpdateCheck, true, "after a push")
	step(protocol.UpdateCheck, false, "again")
	f.push(t, map[string]string{"later2/SKILL.md": "---\nname: later2\ndescription: L\n---\n"})
	step(protocol.UpdateFetch, true, "fetch after a push")
	step(protocol.UpdateNone, false, "none")
}
