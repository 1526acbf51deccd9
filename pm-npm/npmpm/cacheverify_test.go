package npmpm

import (
	"context"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// sessionPM starts a PM on ws with the host cache directory cache, which
// several sessions share, as one host's does; env is the session's
// environment (HOME and the global npmrc isolated unless given).
func sessionPM(t *testing.T, ws, cache string, env map[string]string) *PM {
	t.Helper()
	e := map[string]string{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc")}
	for k, v := range env {
		e[k] = v
	}
	p := New()
	if err := p.Initialize(context.Background(), &pmserver.Session{
		ProtocolVersion: protocol.Version, Workspace: ws, CacheDir: cache,
		Env:    pmserver.NewEnv(e),
		Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	publicWho  = "attacker's package from the public registry\n"
	privateWho = "the company's package\n"
)

// twoRegistries publishes internal-tool 1.2.0 on a public registry and,
// with other content, on a private one; both embed a plugin, so that
// active_plugins offers whichever it finds.
func twoRegistries(t *testing.T) (public, private *fakeregistry.Registry) {
	t.Helper()
	public, private = fakeregistry.New(), fakeregistry.New()
	t.Cleanup(public.Close)
	t.Cleanup(private.Close)
	for reg, who := range map[*fakeregistry.Registry]string{public: publicWho, private: privateWho} {
		reg.Publish(fakeregistry.Version{Name: "internal-tool", Version: "1.2.0", Files: map[string]string{
			"who.txt": who, "skills/who/SKILL.md": "---\nname: who\ndescription: who\n---\n" + who,
		}})
	}
	return public, private
}

// workspaceFor makes a workspace depending on internal-tool 1.2.0 (not
// installed) whose .npmrc names reg.
func workspaceFor(t *testing.T, reg *fakeregistry.Registry) string {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"internal-tool":"1.2.0"}}`,
		".npmrc":       "registry=" + reg.URL() + "\n",
	})
	return ws
}

func who(t *testing.T, root string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "who.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// across is a fetch of internal-tool 1.2.0 in two workspaces sharing one
// cache: first at update "check" in one configured for the public
// registry (other), then res at some update in one configured for the
// private registry (corp).
type across struct {
	public, private *fakeregistry.Registry
	other, corp     *PM
	first, res      protocol.FetchResult
}

// fetchAcross makes the two fetches of across, the second at update.
func fetchAcross(t *testing.T, update protocol.UpdateLevel) across {
	t.Helper()
	var x across
	x.public, x.private = twoRegistries(t)
	cache := t.TempDir()
	ctx := context.Background()
	x.other = sessionPM(t, workspaceFor(t, x.public), cache, nil)
	var err error
	if x.first, err = x.other.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	x.corp = sessionPM(t, workspaceFor(t, x.private), cache, nil)
	if x.res, err = x.corp.Fetch(ctx, npmID("internal-tool", "1.2.0"), update); err != nil {
		t.Fatal(err)
	}
	return x
}

// TestCheckServesOnlyTheRegistrysTarball: one host cache serves a workspace
// configured for the public registry and one configured for a private
// registry publishing another internal-tool 1.2.0. Fetching with update
// "check" in the second after the first serves the private registry's
// tarball, downloaded for it, not the tree cached from the public one
// (npm's own cache is addressed by integrity); a second check is served
// from the cache, and the first workspace's root still holds its tree.
func TestCheckServesOnlyTheRegistrysTarball(t *testing.T) {
	x := fetchAcross(t, protocol.UpdateCheck)
	private, corp, first, res := x.private, x.corp, x.first, x.res
	ctx := context.Background()
	if got := who(t, res.Root); got != privateWho || private.TarballRequests() != 1 {
		t.Errorf("check against the private registry served %s/who.txt = %q (private tarball requests: %d)", res.Root, got, private.TarballRequests())
	}
	again, err := corp.Fetch(ctx, npmID("internal-tool", "^1"), protocol.UpdateCheck)
	if err != nil || again.Root != res.Root || private.TarballRequests() != 1 {
		t.Errorf("second check: %+v %v (private tarball requests %d), want %s from the cache", again, err, private.TarballRequests(), res.Root)
	}
	if got := who(t, first.Root); got != publicWho {
		t.Errorf("the public workspace's root %s now holds %q", first.Root, got)
	}
}

// TestForcedFetchPublishesTheVerifiedTarball: update "fetch" downloads and
// verifies the registry's tarball, and answers the tree of that tarball,
// not a tree of the same name and version cached from another registry or
// from an earlier tarball the registry replaced; roots handed out before
// keep their content.
func TestForcedFetchPublishesTheVerifiedTarball(t *testing.T) {
	x := fetchAcross(t, protocol.UpdateFetch)
	public, private, other, first, res := x.public, x.private, x.other, x.first, x.res
	ctx := context.Background()
	var err error
	if got := who(t, res.Root); got != privateWho {
		t.Errorf("update fetch downloaded and verified the private tarball (%d request(s)) but answered %s with who.txt = %q",
			private.TarballRequests(), res.Root, got)
	}
	// The public registry replaces its tarball (a new integrity): a forced
	// fetch answers the new one; the old root is left as it was.
	public.Publish(fakeregistry.Version{Name: "internal-tool", Version: "1.2.0", Files: map[string]string{"who.txt": "republished\n"}})
	res, err = other.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateFetch)
	if err != nil {
		t.Fatal(err)
	}
	if got := who(t, res.Root); got != "republished\n" || res.Root == first.Root {
		t.Errorf("update fetch after the tarball changed answered %s with who.txt = %q", res.Root, got)
	}
	if got := who(t, first.Root); got != publicWho {
		t.Errorf("the root handed out before, %s, now holds %q", first.Root, got)
	}
	// check now serves the new tarball's tree from the cache.
	tb := public.TarballRequests()
	if again, err := other.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateCheck); err != nil || again.Root != res.Root || public.TarballRequests() != tb {
		t.Errorf("check after the forced fetch: %+v %v (tarball requests %d→%d), want %s", again, err, tb, public.TarballRequests(), res.Root)
	}
}

// TestOfflineServesWhatTheRegistryVerified: what never goes online (fetch
// "none", active_plugins, load_plugin before it fetches) serves a cached
// tree only when the configured registry verified it, and makes no
// request: a workspace configured for the private registry is not offered
// the public registry's tree, load_plugin fetches the private one, and
// from then on each workspace is offered its own registry's tree offline.
func TestOfflineServesWhatTheRegistryVerified(t *testing.T) {
	public, private := twoRegistries(t)
	cache := t.TempDir()
	ctx := context.Background()
	otherWS, corpWS := workspaceFor(t, public), workspaceFor(t, private)
	other := sessionPM(t, otherWS, cache, nil)
	if _, err := other.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	dep := []protocol.PackageID{npmID("internal-tool", "1.2.0")}
	requests := func() int64 { return public.Requests() + private.Requests() }

	corp := sessionPM(t, corpWS, cache, nil)
	before := requests()
	if _, err := corp.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateNone); protocol.CodeOf(err) != protocol.CodeOffline {
		t.Errorf("fetch none with only the public registry's tree cached: %v, want -32011", err)
	}
	offers, err := corp.ActivePlugins(ctx, dep)
	if err != nil || len(offers) != 0 {
		t.Errorf("active_plugins with only the public registry's tree cached: %v %v, want none", offerIDs(offers), err)
	}
	if requests() != before {
		t.Errorf("fetch none and active_plugins made %d registry requests", requests()-before)
	}
	loaded, err := corp.LoadPlugin(ctx, npmID("internal-tool", "1.2.0"))
	if err != nil || len(loaded) != 1 || who(t, loaded[0].Root) != privateWho {
		t.Fatalf("load_plugin: %v %v, want the private registry's tree", offerIDs(loaded), err)
	}
	for _, s := range []struct {
		ws, want string
	}{{corpWS, privateWho}, {otherWS, publicWho}} {
		p := sessionPM(t, s.ws, cache, nil)
		before := requests()
		res, err := p.Fetch(ctx, npmID("internal-tool", "^1"), protocol.UpdateNone)
		if err != nil || who(t, res.Root) != s.want {
			t.Errorf("%s: fetch none: %+v %v, want its registry's tree", s.ws, res, err)
		}
		offers, err := p.ActivePlugins(ctx, dep)
		if err != nil || len(offers) != 1 || who(t, offers[0].Root) != s.want {
			t.Errorf("%s: active_plugins: %v %v, want its registry's tree", s.ws, offerIDs(offers), err)
		}
		loaded, err := p.LoadPlugin(ctx, npmID("internal-tool", "1.2.0"))
		if err != nil || len(loaded) != 1 || loaded[0].Root != offers[0].Root {
			t.Errorf("%s: load_plugin: %v %v, want the tree active_plugins offers", s.ws, offerIDs(loaded), err)
		}
		if requests() != before {
			t.Errorf("%s: fetch none, active_plugins and load_plugin of a cached copy made %d registry requests", s.ws, requests()-before)
		}
	}
}

// TestPersistedOffersFollowTheNpmrc: an active_plugins answer persisted
// with a cached tree the configured registry verified is computed again
// once the .npmrc names another registry, whose own verified tree is then
// offered.
func TestPersistedOffersFollowTheNpmrc(t *testing.T) {
	public, private := twoRegistries(t)
	cache := t.TempDir()
	ctx := context.Background()
	ws := workspaceFor(t, private)
	for _, reg := range []*fakeregistry.Registry{public, private} {
		p := sessionPM(t, workspaceFor(t, reg), cache, nil)
		if _, err := p.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateCheck); err != nil {
			t.Fatal(err)
		}
	}
	dep := []protocol.PackageID{npmID("internal-tool", "1.2.0")}
	time.Sleep(2 * depcache.RacyWindow) // so that the answer is persisted
	offers, err := sessionPM(t, ws, cache, nil).ActivePlugins(ctx, dep)
	if err != nil || len(offers) != 1 || who(t, offers[0].Root) != privateWho {
		t.Fatalf("active_plugins: %v %v, want the private tree", offerIDs(offers), err)
	}
	if files, _ := filepath.Glob(filepath.Join(cache, Name, "active_plugins", "*.cache")); len(files) == 0 {
		t.Fatal("the answer was not persisted")
	}
	writeFiles(t, ws, map[string]string{".npmrc": "registry=" + public.URL() + "\n# now the public one\n"})
	offers, err = sessionPM(t, ws, cache, nil).ActivePlugins(ctx, dep)
	if err != nil || len(offers) != 1 || who(t, offers[0].Root) != publicWho {
		t.Errorf("active_plugins after .npmrc named the public registry: %v %v, want the public tree", offerIDs(offers), err)
	}
}

// TestPersistedOffersFollowTheEnvironment: a registry chosen through the
// environment (npm_config_registry) keys the persisted answer as an .npmrc
// does through its stamp: switching it offers the tree the other registry
// verified, never the answer persisted under the first.
func TestPersistedOffersFollowTheEnvironment(t *testing.T) {
	public, private := twoRegistries(t)
	cache := t.TempDir()
	ctx := context.Background()
	home, global := t.TempDir(), filepath.Join(t.TempDir(), "npmrc")
	env := func(reg *fakeregistry.Registry) map[string]string {
		return map[string]string{"HOME": home, "npm_config_globalconfig": global, "npm_config_registry": reg.URL()}
	}
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"package.json": `{"name":"app","version":"1.0.0","dependencies":{"internal-tool":"1.2.0"}}`})
	for _, reg := range []*fakeregistry.Registry{public, private} {
		if _, err := sessionPM(t, ws, cache, env(reg)).Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateCheck); err != nil {
			t.Fatal(err)
		}
	}
	dep := []protocol.PackageID{npmID("internal-tool", "1.2.0")}
	time.Sleep(2 * depcache.RacyWindow) // so that the answer is persisted
	for _, tc := range []struct {
		reg  *fakeregistry.Registry
		want string
	}{{private, privateWho}, {private, privateWho}, {public, publicWho}, {private, privateWho}} {
		offers, err := sessionPM(t, ws, cache, env(tc.reg)).ActivePlugins(ctx, dep)
		if err != nil || len(offers) != 1 || who(t, offers[0].Root) != tc.want {
			t.Fatalf("active_plugins with npm_config_registry=%s: %v %v, want the tree it verified", tc.reg.URL(), offerIDs(offers), err)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(cache, Name, "active_plugins", "*.cache")); len(files) != 2 {
		t.Errorf("persisted answers %v, want one per registry", files)
	}
}

// TestOldCacheLayoutIsAMiss: a tree cached by a PM before trees were
// keyed by their tarball's digest (<cache>/npm/pkg/<name>/<version>, with
// no record of what it was verified against) is neither served nor an
// error: fetch "none" is -32011, active_plugins offers nothing, and
// "check" downloads the registry's tarball.
func TestOldCacheLayoutIsAMiss(t *testing.T) {
	_, private := twoRegistries(t)
	cache := t.TempDir()
	ctx := context.Background()
	writeFiles(t, filepath.Join(cache, Name, "pkg", "internal-tool", "1.2.0"), map[string]string{
		"package.json":        `{"name":"internal-tool","version":"1.2.0"}`,
		"who.txt":             publicWho,
		"skills/who/SKILL.md": "---\nname: who\ndescription: who\n---\n",
	})
	p := sessionPM(t, workspaceFor(t, private), cache, nil)
	if _, err := p.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateNone); protocol.CodeOf(err) != protocol.CodeOffline {
		t.Errorf("fetch none over an old-layout entry: %v, want -32011", err)
	}
	if offers, err := p.ActivePlugins(ctx, []protocol.PackageID{npmID("internal-tool", "1.2.0")}); err != nil || len(offers) != 0 {
		t.Errorf("active_plugins over an old-layout entry: %v %v, want none", offerIDs(offers), err)
	}
	res, err := p.Fetch(ctx, npmID("internal-tool", "1.2.0"), protocol.UpdateCheck)
	if err != nil || who(t, res.Root) != privateWho || private.TarballRequests() != 1 {
		t.Errorf("check over an old-layout entry: %+v %v (tarball requests %d), want the registry's tarball", res, err, private.TarballRequests())
	}
	if !strings.HasPrefix(res.Root, filepath.Join(cache, Name, unpackedDir)+string(filepath.Separator)) {
		t.Errorf("root %s is not under the current layout", res.Root)
	}
}

// oddKeysRegistry serves the packument of "odd" whose versions are keyed
// as given (each manifest and tarball saying the key's canonical version,
// content "who.txt" naming the key), as a registry may that does not
// normalize keys.
func oddKeysRegistry(t *testing.T, keys ...string) *httptest.Server {
	t.Helper()
	tgz := map[string][]byte{}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := strings.TrimPrefix(r.URL.Path, "/")
		if b, ok := tgz[p]; ok {
			w.Write(b)
			return
		}
		if p != "odd" {
			http.NotFound(w, r)
			return
		}
		var vers []string
		for i, k := range keys {
			canon := strings.TrimPrefix(strings.TrimSpace(k), "v")
			b := fakeregistry.Tarball(fakeregistry.FilesToEntries("package/", map[string]string{
				"package.json": fmt.Sprintf(`{"name":"odd","version":%q}`, canon), "who.txt": k})...)
			path := fmt.Sprintf("odd/-/odd-%d.tgz", i)
			tgz[path] = b
			sum := sha512.Sum512(b)
			kj, _ := json.Marshal(k)
			vers = append(vers, fmt.Sprintf(`%s:{"name":"odd","version":%q,"dist":{"tarball":%q,"integrity":%q}}`,
				kj, canon, srv.URL+"/"+path, "sha512-"+base64.StdEncoding.EncodeToString(sum[:])))
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"name":"odd","dist-tags":{},"versions":{%s}}`, strings.Join(vers, ","))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestVersionKeysCanonical: a packument key written " 1.0.1", "1.0.2\n"
// or "v1.0.3" takes part in ranges as npm reads it (semver trims it), and
// the version answered and the cache directory are its canonical form;
// an exact version only such a key spells is not found (npm: ETARGET).
func TestVersionKeysCanonical(t *testing.T) {
	ctx := context.Background()
	for key, canon := range map[string]string{" 1.0.1": "1.0.1", "1.0.2\n": "1.0.2", "v1.0.3": "1.0.3"} {
		srv := oddKeysRegistry(t, "1.0.0", key)
		cache := t.TempDir()
		p := sessionPM(t, t.TempDir(), cache, map[string]string{"npm_config_registry": srv.URL + "/"})
		res, err := p.Fetch(ctx, npmID("odd", "^1"), protocol.UpdateCheck)
		if err != nil {
			t.Fatalf("%q: %v", key, err)
		}
		if res.ID.Version != canon || who(t, res.Root) != key {
			t.Errorf("%q: answered version %q with who.txt %q, want %q", key, res.ID.Version, who(t, res.Root), canon)
		}
		if dir := filepath.Join(cache, Name, unpackedDir, "odd", canon); !strings.HasPrefix(res.Root, dir+string(filepath.Separator)) {
			t.Errorf("%q: root %q, want one under %s", key, res.Root, dir)
		}
		if got := cachedVersionDirs(t, cache, "odd"); got != canon {
			t.Errorf("%q: cached version directories %q, want %q", key, got, canon)
		}
		if _, err := p.Fetch(ctx, npmID("odd", canon), protocol.UpdateCheck); protocol.CodeOf(err) != protocol.CodeNotFound {
			t.Errorf("%q: the exact version %s, which only the key %q spells: %v, want -32010 (npm: ETARGET)", key, canon, key, err)
		}
		if res, err := p.Fetch(ctx, npmID("odd", canon), protocol.UpdateNone); err != nil || res.ID.Version != canon {
			t.Errorf("%q: fetch none %s: %+v %v", key, canon, res, err)
		}
	}
}

// cachedVersionDirs lists the version directories cached for name, joined
// by "|".
func cachedVersionDirs(t *testing.T, cache, name string) string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(cache, Name, unpackedDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return strings.Join(out, "|")
}

// TestOldPersistedOffersNotServed: an active_plugins answer persisted by a
// PM of the old layout, offering a tree under <cache>/npm/pkg/ (its inputs
// all unchanged), is not served: the answers are versioned anew, and the
// answer is computed again from what the configured registry verified.
func TestOldPersistedOffersNotServed(t *testing.T) {
	_, private := twoRegistries(t)
	cache := t.TempDir()
	ws := workspaceFor(t, private)
	old := filepath.Join(cache, Name, "pkg", "internal-tool", "1.2.0")
	writeFiles(t, old, map[string]string{"package.json": `{"name":"internal-tool","version":"1.2.0"}`, "who.txt": publicWho})
	dep := []protocol.PackageID{npmID("internal-tool", "1.2.0")}
	p := sessionPM(t, ws, cache, nil)
	var rec depcache.Recorder
	rec.ObserveDir(old)
	time.Sleep(2 * depcache.RacyWindow)
	// As the PM before this layout persisted it (its cache key "npm active_plugins 5").
	if err := p.offersCache().StoreAnswer(context.Background(), "npm active_plugins 5", []string{p.workspace}, dep, rec.Stamps(),
		[]protocol.Offer{{ID: dep[0], Root: old, Manifest: json.RawMessage(`{"name":"internal-tool"}`)}}); err != nil {
		t.Fatal(err)
	}
	offers, err := p.ActivePlugins(context.Background(), dep)
	if err != nil || len(offers) != 0 {
		t.Errorf("active_plugins served %v %v; want nothing (the old answer's tree was never verified against this registry)", offerIDs(offers), err)
	}
}

// TestAnsweredVersionsCanonical: a version written otherwise than npm
// publishes it (a search hit's " 1.0.1", an installed package.json's
// "v1.0.0") is answered canonical, as npm normalizes it (semver.clean),
// by search, fetch "none", load_plugin and active_plugins asked for any
// version.
func TestAnsweredVersionsCanonical(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"objects":[{"package":{"name":"odd","version":" 1.0.1"}},{"package":{"name":"vee","version":"v2.0.0\n"}},{"package":{"name":"bad","version":"V1"}}]}`))
	}))
	defer srv.Close()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":                        `{"name":"app","version":"1.0.0","dependencies":{"plug":"*"}}`,
		"node_modules/plug/package.json":      `{"name":"plug","version":"v1.0.0"}`,
		"node_modules/plug/skills/a/SKILL.md": "---\nname: a\ndescription: a\n---\n",
	})
	p := sessionPM(t, ws, t.TempDir(), map[string]string{"npm_config_registry": srv.URL + "/"})
	ctx := context.Background()
	hits, err := p.Search(ctx, "x")
	var got []string
	for _, h := range hits {
		got = append(got, h.ID.Name+"@"+h.ID.Version)
	}
	if err != nil || strings.Join(got, " ") != "odd@1.0.1 vee@2.0.0" {
		t.Errorf("search: %q %v, want [odd@1.0.1 vee@2.0.0]", got, err)
	}
	if res, err := p.Fetch(ctx, npmID("plug", "*"), protocol.UpdateNone); err != nil || res.ID.Version != "1.0.0" {
		t.Errorf("fetch none of the installed copy: %+v %v, want version 1.0.0", res, err)
	}
	if offers, err := p.LoadPlugin(ctx, npmID("plug", "^1")); err != nil || len(offers) != 1 || offers[0].ID.Version != "1.0.0" {
		t.Errorf("load_plugin of the installed copy: %v %v, want version 1.0.0", offerIDs(offers), err)
	}
	if offers, err := p.ActivePlugins(ctx, []protocol.PackageID{npmID("plug", "*")}); err != nil || len(offers) != 1 || offers[0].ID.Version != "1.0.0" {
		t.Errorf("active_plugins of the installed copy: %v %v, want version 1.0.0", offerIDs(offers), err)
	}
}
