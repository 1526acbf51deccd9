package pypipm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestCacheAcrossIndexes: one host cache_dir serves workspaces configured
// for different indexes. A private index and the public one may publish
// different files under one name and version (the public one a squatter's):
// a workspace configured for the private index must get the private file,
// whatever another workspace fetched from the public one before it, at
// every level that may ask the index; and the public workspace's root must
// stay what it was (§5.4: a root handed out stays valid and unchanged).
func TestCacheAcrossIndexes(t *testing.T) {
	const (
		public  = "attacker's package from the public index\n"
		private = "the company's package\n"
	)
	pub := fakeindex.Start(fakeindex.Package{Name: "internal-tool", Version: "1.2.0",
		Files: map[string]string{"internal_tool/who.txt": public}})
	defer pub.Close()
	corp := fakeindex.Start(fakeindex.Package{Name: "internal-tool", Version: "1.2.0",
		Files: map[string]string{"internal_tool/who.txt": private}})
	defer corp.Close()
	who := func(root string) string {
		data, _ := os.ReadFile(filepath.Join(root, "internal_tool", "who.txt"))
		return string(data)
	}

	cache := t.TempDir() // one host cache_dir, shared by the sessions
	ctx := context.Background()
	other := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": pub.URL})
	first, err := other.Fetch(ctx, id("internal-tool", ">=1"), protocol.UpdateCheck)
	if err != nil {
		t.Fatal(err)
	}
	if who(first.Root) != public {
		t.Fatalf("the public index's copy: %q", who(first.Root))
	}
	p := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": corp.URL})
	for _, tc := range []struct {
		version string
		update  protocol.UpdateLevel
	}{
		{">=1", protocol.UpdateCheck},
		{"==1.2.0", protocol.UpdateCheck}, // an exact pin, served without the network when this index verified it
		{"1.2.0", protocol.UpdateCheck},
		{"1.2.0", protocol.UpdateNone},
		{"*", protocol.UpdateFetch},
		{"1.2.0", protocol.UpdateNone},
	} {
		before := corp.Requests()
		res, err := p.Fetch(ctx, id("internal-tool", tc.version), tc.update)
		if err != nil {
			t.Fatalf("%s %s: %v", tc.version, tc.update, err)
		}
		if got := who(res.Root); got != private {
			t.Errorf("%s at %s with the private index configured served %s = %q (private index requests: %d)",
				tc.version, tc.update, res.Root, got, corp.Requests()-before)
		}
		if res.Root == first.Root {
			t.Errorf("%s at %s: the private file was served from the public file's root %s", tc.version, tc.update, res.Root)
		}
	}
	// The public workspace's exact pin, which its index verified, is still
	// served from its own root without asking, and that root is unchanged.
	before := pub.Requests()
	again, err := other.Fetch(ctx, id("internal-tool", "==1.2.0"), protocol.UpdateCheck)
	if err != nil || again.Root != first.Root || pub.Requests() != before {
		t.Errorf("the public workspace's exact pin again: %v %v (requests %d)", again, err, pub.Requests()-before)
	}
	if who(first.Root) != public {
		t.Errorf("the root handed out to the public workspace changed: %q", who(first.Root))
	}
	// The public workspace verifying its file last does not change what
	// "none" serves the private one: what its own index verified.
	if _, err := other.Fetch(ctx, id("internal-tool", ">=1"), protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	if res, err := p.Fetch(ctx, id("internal-tool", "1.2.0"), protocol.UpdateNone); err != nil || who(res.Root) != private {
		t.Errorf("none after the public workspace's check: %v %v", res, err)
	}
	// A third workspace, on a third index that has no such file, does not
	// get either when its index is down: nothing its index verified is
	// cached.
	down := fakeindex.Start()
	defer down.Close()
	down.Down.Store(true)
	q := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": down.URL})
	if res, err := q.Fetch(ctx, id("internal-tool", "==1.2.0"), protocol.UpdateCheck); code(err) != protocol.CodeRegistry {
		t.Errorf("an exact pin with an unreachable index that never verified it: %v %v", res, err)
	}
	if res, err := q.Fetch(ctx, id("internal-tool", ">=1"), protocol.UpdateCheck); code(err) != protocol.CodeRegistry {
		t.Errorf("a range with an unreachable index that never verified it: %v %v", res, err)
	}
}

// switchIndex is a one-project simple API index (PEP 691 JSON) whose file
// can be replaced by another under the same name, as a private index that
// allows overwriting does; digest, when set, is the sha256 it publishes
// instead of the file's.
type switchIndex struct {
	*httptest.Server
	mu       sync.Mutex
	filename string
	data     []byte
	digest   string
	requests atomic.Int64
}

func startSwitchIndex(t *testing.T) *switchIndex {
	t.Helper()
	ix := &switchIndex{}
	ix.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ix.requests.Add(1)
		ix.mu.Lock()
		defer ix.mu.Unlock()
		switch {
		case ix.filename == "":
			http.NotFound(w, r)
		case r.URL.Path == "/simple/demo-pkg/":
			sum := sha256.Sum256(ix.data)
			digest := hex.EncodeToString(sum[:])
			if ix.digest != "" {
				digest = ix.digest
			}
			page, _ := json.Marshal(map[string]any{"meta": map[string]string{"api-version": "1.1"},
				"files": []any{map[string]any{"filename": ix.filename, "url": "/files/" + ix.filename, "hashes": map[string]string{"sha256": digest}}}})
			w.Header().Set("Content-Type", "application/vnd.pypi.simple.v1+json")
			w.Write(page)
		case r.URL.Path == "/files/"+ix.filename:
			w.Write(ix.data)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(ix.Close)
	return ix
}

// publish serves a wheel of demo-pkg at version holding note, and a
// plugin (an entry point naming demo_pkg, which has skills/).
func (ix *switchIndex) publish(version, note, digest string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.filename = "demo_pkg-" + version + "-py3-none-any.whl"
	ix.data = fakeindex.BuildWheel(fakeindex.Package{Name: "demo-pkg", Version: version,
		Files:       map[string]string{"demo_pkg/note.txt": note, "demo_pkg/skills/a/SKILL.md": "---\nname: a\ndescription: a\n---\n"},
		EntryPoints: "[symposium]\ndemo = demo_pkg\n"})
	ix.digest = digest
}

func note(root string) string {
	data, _ := os.ReadFile(filepath.Join(root, "demo_pkg", "note.txt"))
	return string(data)
}

// TestFileReplacedOnIndex: when the configured index publishes another file
// for a version already cached (an overwrite on a private index), "check"
// for a range and "fetch" serve the new file, never the tree of the old
// one; an exact pin at "check" trusts what this index verified before (as
// a pin on one index names one file); "none" then serves the newest
// verified. The old tree is left as it was: another connection may hold
// its root.
func TestFileReplacedOnIndex(t *testing.T) {
	ix := startSwitchIndex(t)
	ix.publish("1.0", "first build\n", "")
	p := newPM(t, t.TempDir(), t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL + "/simple/"})
	ctx := context.Background()
	fetch := func(version string, update protocol.UpdateLevel, want string) protocol.FetchResult {
		t.Helper()
		res, err := p.Fetch(ctx, id("demo-pkg", version), update)
		if err != nil {
			t.Fatalf("%s at %s: %v", version, update, err)
		}
		if got := note(res.Root); got != want {
			t.Errorf("%s at %s served %q from %s, want %q", version, update, got, res.Root, want)
		}
		return res
	}
	first := fetch("1.0", protocol.UpdateCheck, "first build\n")

	ix.publish("1.0", "second build\n", "")
	n := ix.requests.Load()
	if res := fetch("==1.0", protocol.UpdateCheck, "first build\n"); res.Root != first.Root || ix.requests.Load() != n {
		t.Errorf("an exact pin this index verified: %s, %d requests", res.Root, ix.requests.Load()-n)
	}
	second := fetch(">=1", protocol.UpdateCheck, "second build\n")
	if second.Root == first.Root {
		t.Errorf("the new file was unpacked over the old one's root %s", first.Root)
	}
	fetch("==1.0", protocol.UpdateCheck, "second build\n")
	fetch("1.0", protocol.UpdateNone, "second build\n")

	ix.publish("1.0", "third build\n", "")
	third := fetch("1.0", protocol.UpdateFetch, "third build\n")
	fetch("1.0", protocol.UpdateNone, "third build\n")
	fetch("==1.0", protocol.UpdateCheck, "third build\n")
	if note(first.Root) != "first build\n" || note(second.Root) != "second build\n" || third.Root == second.Root {
		t.Errorf("roots handed out changed: %q %q (%s, %s)", note(first.Root), note(second.Root), second.Root, third.Root)
	}
}

// TestIndexDigestNotAPath: the sha256 an index publishes names the cache
// directory of the file's tree, so it is refused (-32013) unless it is one:
// a "digest" like ../0.9/<sha256> would otherwise serve the tree of
// another cached version as this one, unchecked.
func TestIndexDigestNotAPath(t *testing.T) {
	ix := startSwitchIndex(t)
	ix.publish("0.9", "old\n", "")
	cache := t.TempDir()
	p := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": ix.URL + "/simple/"})
	ctx := context.Background()
	old, err := p.Fetch(ctx, id("demo-pkg", "0.9"), protocol.UpdateCheck)
	if err != nil {
		t.Fatal(err)
	}
	ix.publish("1.0", "new\n", "../0.9/"+filepath.Base(old.Root))
	res, err := p.Fetch(ctx, id("demo-pkg", ">=1"), protocol.UpdateCheck)
	if code(err) != protocol.CodeIntegrity {
		t.Fatalf("an index digest naming another version's tree: %v %v", res, err)
	}
	if !strings.Contains(err.Error(), "not a sha256") {
		t.Errorf("error: %v", err)
	}
	if ents, _ := os.ReadDir(filepath.Join(cache, "pypi", unpackedDir, "demo-pkg")); len(ents) != 1 {
		t.Errorf("cache entries: %v", ents)
	}
}

// TestOldCacheLayoutIsAMiss: trees cached by earlier versions of the PM
// (<cache>/pypi/dist/<name>/<version>/, with no record of the file they came
// from), and trees with no pointer naming them or a pointer naming no tree,
// are misses: "none" answers -32011 and "check" downloads, verifies and
// serves the index's file.
func TestOldCacheLayoutIsAMiss(t *testing.T) {
	ix := startSwitchIndex(t)
	ix.publish("1.0", "from the index\n", "")
	cache := t.TempDir()
	// The earlier layout, holding something else.
	old := filepath.Join(cache, "pypi", "dist", "demo-pkg", "1.0")
	os.MkdirAll(filepath.Join(old, "demo_pkg"), 0o755)
	os.MkdirAll(filepath.Join(old, "demo_pkg-1.0.dist-info"), 0o755)
	os.WriteFile(filepath.Join(old, "demo_pkg", "note.txt"), []byte("stale\n"), 0o644)
	os.WriteFile(filepath.Join(old, "demo_pkg-1.0.dist-info", "METADATA"), []byte("Metadata-Version: 2.1\nName: demo-pkg\nVersion: 1.0\n"), 0o644)
	// A tree nothing names, and pointers naming nothing or garbage.
	vdir := filepath.Join(cache, "pypi", unpackedDir, "demo-pkg", "1.0")
	orphan := filepath.Join(vdir, strings.Repeat("a", 64))
	os.MkdirAll(filepath.Join(orphan, "demo_pkg-1.0.dist-info"), 0o755)
	// The "latest" pointer earlier versions wrote, naming the orphan: not
	// read.
	os.WriteFile(filepath.Join(vdir, "latest"), []byte(strings.Repeat("a", 64)+"\n"), 0o644)
	p := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": ix.URL + "/simple/"})
	os.WriteFile(filepath.Join(vdir, p.indexPointer(nil)), []byte("../../../dist/demo-pkg/1.0\n"), 0o644)
	ctx := context.Background()
	if res, err := p.Fetch(ctx, id("demo-pkg", "1.0"), protocol.UpdateNone); code(err) != protocol.CodeOffline {
		t.Errorf("none over the old layout: %v %v", res, err)
	}
	res, err := p.Fetch(ctx, id("demo-pkg", "1.0"), protocol.UpdateCheck)
	if err != nil {
		t.Fatal(err)
	}
	if got := note(res.Root); got != "from the index\n" {
		t.Errorf("check over the old layout served %q from %s", got, res.Root)
	}
	if res2, err := p.Fetch(ctx, id("demo-pkg", "1.0"), protocol.UpdateNone); err != nil || res2 != res {
		t.Errorf("none after check: %v %v", res2, err)
	}
}

// TestOldLayoutAnswerNotServed: an active_plugins answer persisted by an
// earlier version of the PM, which offered a tree of the earlier cache
// layout (<cache>/pypi/dist/), is not served: that tree no longer counts as
// cached, and its stamps alone would keep the answer valid.
func TestOldLayoutAnswerNotServed(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	p := newPM(t, ws, cache, nil)
	ctx := context.Background()
	oldTree := filepath.Join(cache, "pypi", "dist", "demo-pkg", "1.0")
	os.MkdirAll(filepath.Join(oldTree, "demo_pkg", "skills", "a"), 0o755)
	os.WriteFile(filepath.Join(oldTree, "demo_pkg", "skills", "a", "SKILL.md"), []byte("---\nname: a\ndescription: a\n---\n"), 0o644)
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond) // for the answer to be persisted
	deps := []protocol.PackageID{id("demo-pkg", "1.0")}
	_, keyCtx := p.offersContext(ctx)
	var rec depcache.Recorder
	rec.ObserveDir(filepath.Join(cache, "pypi", "dist", "demo-pkg"))
	rec.ObserveDir(oldTree)
	rec.ObserveDir(filepath.Join(oldTree, "demo_pkg"))
	old := []protocol.Offer{{ID: deps[0], Root: filepath.Join(oldTree, "demo_pkg"), Manifest: json.RawMessage(`{"name":"demo-pkg"}`)}}
	if err := p.offersCache().StoreAnswer(ctx, "pypi active_plugins 4", keyCtx, deps, rec.Stamps(), old); err != nil {
		t.Fatal(err)
	}
	offers, err := p.ActivePlugins(ctx, deps)
	if err != nil || len(offers) != 0 {
		t.Errorf("active_plugins over an answer persisted for the old layout: %+v %v", offers, err)
	}
}

// TestActivePluginsFromCache: active_plugins (offline, reading no index
// configuration) offers an exact version the virtualenv does not hold from
// the tree verified last, and a later download of another file for that
// version is seen by the next hook, whose persisted answer it invalidates.
func TestActivePluginsFromCache(t *testing.T) {
	ix := startSwitchIndex(t)
	ix.publish("1.0", "first build\n", "")
	p := newPM(t, t.TempDir(), t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL + "/simple/"})
	ctx := context.Background()
	deps := []protocol.PackageID{id("demo-pkg", "1.0")}
	offered := func() string {
		t.Helper()
		n := ix.requests.Load()
		offers, err := p.ActivePlugins(ctx, deps)
		if err != nil || len(offers) != 1 {
			t.Fatalf("active_plugins: %+v %v", offers, err)
		}
		if ix.requests.Load() != n {
			t.Error("active_plugins used the network")
		}
		return note(filepath.Dir(offers[0].Root))
	}
	if _, err := p.Fetch(ctx, deps[0], protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	if got := offered(); got != "first build\n" {
		t.Errorf("offered %q", got)
	}
	ix.publish("1.0", "second build\n", "")
	if _, err := p.Fetch(ctx, id("demo-pkg", ">=1"), protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	pastSharedRead()
	if got := offered(); got != "second build\n" {
		t.Errorf("after the new file was verified, offered %q", got)
	}
}

// TestActivePluginsOnlyConfiguredIndex: active_plugins, which never asks
// an index, offers a cached tree only when the index the workspace is
// configured for (its pip.conf, or PIP_INDEX_URL) verified it: a
// workspace configured for a private index is not offered the tree
// another workspace fetched from the public one under the same name and
// version, and is offered its own once it fetched it. Its persisted
// answer is recomputed when the configuration it was chosen by changes:
// an edit to pip.conf, or another PIP_INDEX_URL.
func TestActivePluginsOnlyConfiguredIndex(t *testing.T) {
	pub, corp := startSwitchIndex(t), startSwitchIndex(t)
	pub.publish("1.0", "public build\n", "")
	corp.publish("1.0", "private build\n", "")
	cache := t.TempDir() // one host cache_dir, shared by the workspaces
	ctx := context.Background()
	deps := []protocol.PackageID{id("demo-pkg", "1.0")}
	offered := func(p *PM) string {
		t.Helper()
		offers, err := p.ActivePlugins(ctx, deps)
		if err != nil || len(offers) > 1 {
			t.Fatalf("active_plugins: %+v %v", offers, err)
		}
		if len(offers) == 0 {
			return ""
		}
		return note(filepath.Dir(offers[0].Root))
	}

	a := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": pub.URL + "/simple/"})
	if _, err := a.Fetch(ctx, deps[0], protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	if got := offered(a); got != "public build\n" {
		t.Fatalf("workspace A offered %q", got)
	}

	wsB := t.TempDir()
	conf := filepath.Join(wsB, "pip.conf")
	writeConf := func(url string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(conf, []byte("[global]\nindex-url = "+url+"/simple/\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// An mtime in the past and a change time past the racy window,
		// for each answer to be persisted.
		os.Chtimes(conf, mtime, mtime)
		time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	}
	writeConf(corp.URL, time.Now().Add(-time.Hour))
	envB := map[string]string{"PIP_CONFIG_FILE": conf}
	b := newPM(t, wsB, cache, envB)
	if got := offered(b); got != "" {
		t.Errorf("workspace B, configured for the private index, offered %q before fetching", got)
	}
	n := pub.requests.Load() + corp.requests.Load()
	if _, err := b.Fetch(ctx, deps[0], protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	if corp.requests.Load()+pub.requests.Load() == n {
		t.Error("workspace B's fetch did not ask its index")
	}
	pastSharedRead()
	time.Sleep(depcache.RacyWindow) // for the answer to be persisted
	if got := offered(b); got != "private build\n" {
		t.Errorf("workspace B after its fetch offered %q", got)
	}
	// The next hook, a new process, with nothing changed: the same.
	if got := offered(newPM(t, wsB, cache, envB)); got != "private build\n" {
		t.Errorf("workspace B, next hook, offered %q", got)
	}
	// pip.conf now names the public index: its verified tree is offered,
	// not the answer persisted under the private one.
	writeConf(pub.URL, time.Now().Add(-50*time.Minute))
	if got := offered(newPM(t, wsB, cache, envB)); got != "public build\n" {
		t.Errorf("workspace B after pip.conf named the public index offered %q", got)
	}
	writeConf(corp.URL, time.Now().Add(-40*time.Minute))
	if got := offered(newPM(t, wsB, cache, envB)); got != "private build\n" {
		t.Errorf("workspace B after pip.conf named the private index again offered %q", got)
	}
	// PIP_INDEX_URL, which overrides pip.conf, is part of the answer's key.
	envPub := map[string]string{"PIP_CONFIG_FILE": conf, "PIP_INDEX_URL": pub.URL + "/simple/"}
	if got := offered(newPM(t, wsB, cache, envPub)); got != "public build\n" {
		t.Errorf("workspace B with PIP_INDEX_URL naming the public index offered %q", got)
	}
	// update "none" serves what the configured index verified, too.
	down := startSwitchIndex(t)
	c := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": down.URL + "/simple/"})
	if res, err := c.Fetch(ctx, deps[0], protocol.UpdateNone); code(err) != protocol.CodeOffline {
		t.Errorf("none for a workspace whose index never verified it: %v %v", res, err)
	}
	if got := offered(c); got != "" {
		t.Errorf("workspace C, whose index never verified it, offered %q", got)
	}
}
