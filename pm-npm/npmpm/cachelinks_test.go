package npmpm

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// cachedAgainstCold runs the hook with a cache (first run persists), applies
// change, and compares the cached PM's next answer with a cold PM's.
func cachedAgainstCold(t *testing.T, ws string, deps []protocol.PackageID, change func()) {
	t.Helper()
	var computed atomic.Int32
	cached, fresh := rawHooks(t, ws, deps, &computed)
	settle()
	first := cached.Run(t).Offers
	computed.Store(0)
	cached.Run(t)
	if computed.Load() != 0 {
		t.Fatalf("the second hook was not served from the cache")
	}
	change()
	got := cached.Run(t).Offers
	want := fresh.Run(t).Offers
	pmtest.CheckInvalidation(t, true, first, got, want)
}

// TestCacheSeesSkillsThroughLinkedDir: a package whose content is stamped
// file by file (a node_modules without an installer's record) embeds its
// plugin through skills/**/SKILL.md alone, where skills/shared is a link to
// a directory inside the package. The walk that decides it follows the
// link, so the cache records the directory it leads to: a SKILL.md added
// there is seen, as a cold run sees it.
func TestCacheSeesSkillsThroughLinkedDir(t *testing.T) {
	ws := t.TempDir()
	deps := append(cacheWorkspace(t, ws), npmID("lnk", "1.0.0"))
	writeFiles(t, ws, map[string]string{
		"node_modules/lnk/package.json":  `{"name":"lnk","version":"1.0.0"}`,
		"node_modules/lnk/docs/x/README": "",
		"node_modules/lnk/skills/.keep":  "",
	})
	if err := os.Symlink(filepath.Join("..", "docs"), filepath.Join(ws, "node_modules/lnk/skills/shared")); err != nil {
		t.Skip(err)
	}
	cachedAgainstCold(t, ws, deps, func() {
		writeFiles(t, ws, map[string]string{"node_modules/lnk/docs/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
	})
}

// TestCacheSeesDanglingManifestLinkResolved: SYMPOSIUM.toml is a link,
// inside the package, to a file not written yet (conf/SYMPOSIUM.toml).
// Unlike an absent file, whose appearing changes its directory, the link's
// target can appear without touching the package directory, so the link
// keeps a stamp of its own: writing the target is seen, as a cold run
// reads the manifest through the link.
func TestCacheSeesDanglingManifestLinkResolved(t *testing.T) {
	ws := t.TempDir()
	deps := append(cacheWorkspace(t, ws), npmID("dl", "1.0.0"))
	writeFiles(t, ws, map[string]string{
		"node_modules/dl/package.json": `{"name":"dl","version":"1.0.0"}`,
		"node_modules/dl/conf/.keep":   "",
	})
	if err := os.Symlink(filepath.Join("conf", "SYMPOSIUM.toml"), filepath.Join(ws, "node_modules/dl/SYMPOSIUM.toml")); err != nil {
		t.Skip(err)
	}
	cachedAgainstCold(t, ws, deps, func() {
		writeFiles(t, ws, map[string]string{"node_modules/dl/conf/SYMPOSIUM.toml": "name = \"dl-plugin\"\n"})
	})
}

// TestCacheEntryNotOneLineIsComputedAgain: a persisted encoded answer
// whose value holds a line break (valid JSON whitespace, the entry's
// length made to match) is one the harness would refuse to send: loading
// it is a miss and the answer is computed again, on every hook, rather
// than active_plugins failing until an input changes.
func TestCacheEntryNotOneLineIsComputedAgain(t *testing.T) {
	ws := t.TempDir()
	deps := cacheWorkspace(t, ws)
	cache := t.TempDir()
	env := map[string]string{"HOME": t.TempDir(), "npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc")}
	run := func(cacheDir string) ([]protocol.Offer, error) {
		c, err := host.NewLocal(t.Context(), New(), host.Options{Workspace: ws, CacheDir: cacheDir, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var offers []protocol.Offer
		err = c.Call(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: deps}, &offers)
		return offers, err
	}
	settle()
	if _, err := run(cache); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(cache, Name, "active_plugins", "*.cache"))
	if len(files) != 1 {
		t.Fatalf("entries %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("\n\n["))
	if i < 0 {
		t.Fatal("no value")
	}
	corrupt := append(append(append([]byte{}, data[:i+3]...), '\n'), data[i+3:]...)
	// The entry's first line gives its value's length: one byte more.
	first, rest, _ := bytes.Cut(corrupt, []byte("\n"))
	sp := bytes.LastIndexByte(first, ' ')
	n, err := strconv.Atoi(string(first[sp+1:]))
	if err != nil {
		t.Fatalf("entry's first line %q: %v", first, err)
	}
	corrupt = append(append(append(first[:sp+1:sp+1], strconv.Itoa(n+1)...), '\n'), rest...)
	if err := os.WriteFile(files[0], corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	want, err := run("")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		got, err := run(cache)
		if err != nil {
			t.Errorf("hook %d with the cache: active_plugins failed: %v (a cold PM answers %d offers)", i+1, err, len(want))
			continue
		}
		pmtest.CheckInvalidation(t, false, nil, got, want)
	}
}
