package npmpm

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func npmID(name, version string) protocol.PackageID {
	return protocol.PackageID{PM: Name, Name: name, Version: version}
}

// cacheEntries lists what sits under <cache>/npm/unpacked, relative.
func cacheEntries(t *testing.T, cache string) []string {
	t.Helper()
	var out []string
	root := filepath.Join(cache, Name, unpackedDir)
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != root {
			rel, _ := filepath.Rel(root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestFetchAndLoadPlugin(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	for _, v := range []string{"1.0.0", "1.4.0", "2.0.0-beta.1"} {
		reg.Publish(fakeregistry.Version{Name: "@acme/skills", Version: v, Description: "acme skills",
			Files: map[string]string{"skills/a/SKILL.md": "---\nname: a\ndescription: d\n---\nbody\n"}})
	}
	reg.Publish(fakeregistry.Version{Name: "@acme/skills", Version: "1.5.0", Deprecated: "use 1.4"})
	reg.Publish(fakeregistry.Version{Name: "plain", Version: "3.1.4", Files: map[string]string{
		"package.json":   `{"name":"plain","version":"3.1.4","symposium":{"name":"plain-plugin","skills":[{"source":{"path":"guide"}}]}}`,
		"SYMPOSIUM.toml": "[defaults]\nskills = false\n",
	}})
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{".npmrc": "registry=" + reg.URL() + "\n"})
	p, cache := newPM(t, ws, nil)
	ctx := context.Background()

	// Offline before anything is cached.
	_, err := p.Fetch(ctx, npmID("@acme/skills", "^1"), protocol.UpdateNone)
	if protocol.CodeOf(err) != protocol.CodeOffline {
		t.Fatalf("fetch none with empty cache: %v, want -32011", err)
	}
	// check: ^1 resolves to 1.4.0 (1.5.0 is deprecated, latest tag points at it).
	res, err := p.Fetch(ctx, npmID("@acme/skills", "^1"), protocol.UpdateCheck)
	if err != nil {
		t.Fatal(err)
	}
	if res.ID.Version != "1.4.0" {
		t.Errorf("^1 resolved to %s, want 1.4.0 (npm avoids deprecated versions)", res.ID.Version)
	}
	if _, err := os.Stat(filepath.Join(res.Root, "skills/a/SKILL.md")); err != nil {
		t.Errorf("fetched content: %v", err)
	}
	// Deprecated versions are still allowed when asked for.
	if res, err := p.Fetch(ctx, npmID("@acme/skills", "1.5.0"), protocol.UpdateCheck); err != nil || res.ID.Version != "1.5.0" {
		t.Errorf("exact deprecated version: %+v %v", res, err)
	}
	// Pre-release only through a range naming it.
	if res, err := p.Fetch(ctx, npmID("@acme/skills", "^2.0.0-beta"), protocol.UpdateCheck); err != nil || res.ID.Version != "2.0.0-beta.1" {
		t.Errorf("prerelease range: %+v %v", res, err)
	}
	if _, err := p.Fetch(ctx, npmID("@acme/skills", "^3"), protocol.UpdateCheck); protocol.CodeOf(err) != protocol.CodeNotFound {
		t.Errorf("unsatisfiable range: %v, want -32010", err)
	}
	if _, err := p.Fetch(ctx, npmID("nope", "*"), protocol.UpdateCheck); protocol.CodeOf(err) != protocol.CodeNotFound {
		t.Errorf("missing package: %v, want -32010", err)
	}
	// none now serves the cache, no network.
	before := reg.Requests()
	res, err = p.Fetch(ctx, npmID("@acme/skills", "~1.4"), protocol.UpdateNone)
	if err != nil || res.ID.Version != "1.4.0" || reg.Requests() != before {
		t.Errorf("fetch none after caching: %+v %v (requests %d→%d)", res, err, before, reg.Requests())
	}
	// fetch re-downloads.
	tb := reg.TarballRequests()
	if _, err := p.Fetch(ctx, npmID("@acme/skills", "1.4.0"), protocol.UpdateFetch); err != nil || reg.TarballRequests() != tb+1 {
		t.Errorf("update fetch: %v, tarball requests %d→%d", err, tb, reg.TarballRequests())
	}
	// Foreign and malformed ids.
	if _, err := p.Fetch(ctx, protocol.PackageID{PM: "cargo", Name: "x", Version: "*"}, protocol.UpdateNone); protocol.CodeOf(err) != protocol.CodeForeignID {
		t.Errorf("foreign id: %v", err)
	}
	if _, err := p.Fetch(ctx, npmID("../etc", "*"), protocol.UpdateNone); protocol.CodeOf(err) != protocol.CodeForeignID {
		t.Errorf("malformed name: %v", err)
	}

	// load_plugin synthesizes a manifest: package.json layer, SYMPOSIUM.toml over it.
	offers, err := p.LoadPlugin(ctx, npmID("plain", "latest"))
	if err != nil || len(offers) != 1 {
		t.Fatalf("load_plugin: %v %v", offers, err)
	}
	var m map[string]any
	json.Unmarshal(offers[0].Manifest, &m)
	if m["name"] != "plain-plugin" || !strings.Contains(string(offers[0].Manifest), `"guide"`) || strings.Contains(string(offers[0].Manifest), `"path":"skills"`) {
		t.Errorf("manifest %s", offers[0].Manifest)
	}
	offers, err = p.LoadPlugin(ctx, npmID("@acme/skills", "1.0.0"))
	if err != nil || len(offers) != 1 || offers[0].ID.Version != "1.0.0" || !strings.Contains(string(offers[0].Manifest), `"name":"@acme/skills"`) {
		t.Errorf("load_plugin skills package: %+v %v", offers, err)
	}
	t.Logf("cache: %v", cacheEntries(t, cache))
}

func TestFetchRefusesBadContent(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "tampered", Version: "1.0.0",
		Integrity: "sha512-AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="})
	reg.Publish(fakeregistry.Version{Name: "sha1only", Version: "1.0.0", NoIntegrity: true})
	hostile := map[string][]fakeregistry.Entry{
		"dotdot":   {{Name: "package/package.json", Body: "{}"}, {Name: "package/../../evil", Body: "x"}},
		"absolute": {{Name: "/etc/evil", Body: "x"}},
		"symlink":  {{Name: "package/link", Type: tar.TypeSymlink, Linkname: "/etc/passwd"}},
		"hardlink": {{Name: "package/a", Body: "x"}, {Name: "package/b", Type: tar.TypeLink, Linkname: "package/a"}},
		"device":   {{Name: "package/dev", Type: tar.TypeChar}},
	}
	for name, entries := range hostile {
		reg.Publish(fakeregistry.Version{Name: name, Version: "1.0.0", Tarball: fakeregistry.Tarball(entries...)})
	}
	reg.Publish(fakeregistry.Version{Name: "notgzip", Version: "1.0.0", Tarball: []byte("this is not a tarball")})

	ws := t.TempDir()
	p, cache := newPM(t, ws, map[string]string{"npm_config_registry": reg.URL()})
	ctx := context.Background()
	_, err := p.Fetch(ctx, npmID("tampered", "1.0.0"), protocol.UpdateCheck)
	if protocol.CodeOf(err) != protocol.CodeIntegrity {
		t.Errorf("integrity mismatch: %v, want -32013", err)
	}
	if res, err := p.Fetch(ctx, npmID("sha1only", "1.0.0"), protocol.UpdateCheck); err != nil {
		t.Errorf("sha1 shasum fallback: %+v %v", res, err)
	}
	for name := range hostile {
		_, err := p.Fetch(ctx, npmID(name, "1.0.0"), protocol.UpdateCheck)
		if protocol.CodeOf(err) != protocol.CodeInvalidContent {
			t.Errorf("%s tarball: %v, want -32014", name, err)
		}
	}
	if _, err := p.Fetch(ctx, npmID("notgzip", "1.0.0"), protocol.UpdateCheck); protocol.CodeOf(err) != protocol.CodeInvalidContent {
		t.Errorf("corrupt tarball: %v, want -32014", err)
	}
	for _, e := range cacheEntries(t, cache) {
		if !strings.HasPrefix(e, "sha1only") {
			t.Errorf("cache holds %s; only sha1only was valid", e)
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(cache, Name, "tmp")); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(cache), "evil")); err == nil {
		t.Error("a hostile tarball wrote outside the cache")
	}
}

func TestAuthTokenFromNpmrc(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "@corp/private", Version: "1.0.0"})
	const token = "s3cr3t-token-value"
	reg.RequireToken(token)
	home := t.TempDir()
	host := strings.TrimPrefix(reg.URL(), "http:")
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{".npmrc": "@corp:registry=" + reg.URL() + "\n"})
	ctx := context.Background()

	// Without the token: a registry error that does not leak anything.
	p, _ := newPM(t, ws, map[string]string{"HOME": home})
	_, err := p.Fetch(ctx, npmID("@corp/private", "*"), protocol.UpdateCheck)
	if protocol.CodeOf(err) != protocol.CodeRegistry {
		t.Errorf("without token: %v, want -32012", err)
	}
	// With ${VAR} expansion in the user's ~/.npmrc.
	writeFiles(t, home, map[string]string{".npmrc": host + ":_authToken=${CORP_TOKEN}\n"})
	p, _ = newPM(t, ws, map[string]string{"HOME": home, "CORP_TOKEN": token})
	res, err := p.Fetch(ctx, npmID("@corp/private", "*"), protocol.UpdateCheck)
	if err != nil || res.ID.Version != "1.0.0" {
		t.Errorf("with token: %+v %v", res, err)
	}
	if err != nil && strings.Contains(err.Error(), token) {
		t.Error("token leaked into an error")
	}
}

func TestSearch(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "agent-skills-react", Version: "1.2.0", Description: "React skills for agents"})
	reg.Publish(fakeregistry.Version{Name: "unrelated", Version: "1.0.0"})
	p, _ := newPM(t, t.TempDir(), map[string]string{"npm_config_registry": reg.URL()})
	hits, err := p.Search(context.Background(), "react")
	if err != nil || len(hits) != 1 || hits[0].ID != npmID("agent-skills-react", "1.2.0") || hits[0].Description == "" {
		t.Errorf("search: %+v %v", hits, err)
	}
}

// TestConcurrentFetchSharedCache runs several PMs (as separate processes
// would be) fetching the same versions into one cache at once: all succeed
// with the same root and no temporary entry is left behind.
func TestConcurrentFetchSharedCache(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "shared", Version: "1.0.0", Files: map[string]string{"skills/s/SKILL.md": "x"}})
	cache := t.TempDir()
	ws := t.TempDir()
	const n = 6
	roots := make(chan string, n)
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		p, _ := newPM(t, ws, map[string]string{"npm_config_registry": reg.URL()})
		p.cacheRoot = filepath.Join(cache, Name)
		go func() {
			res, err := p.Fetch(context.Background(), npmID("shared", "^1"), protocol.UpdateFetch)
			roots <- res.Root
			errs <- err
		}()
	}
	var first string
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
		r := <-roots
		if first == "" {
			first = r
		} else if r != first {
			t.Errorf("roots differ: %s and %s", first, r)
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(cache, Name, "tmp")); len(tmp) != 0 {
		t.Errorf("temporary entries left: %v", tmp)
	}
	if _, err := os.Stat(filepath.Join(first, "skills/s/SKILL.md")); err != nil {
		t.Error(err)
	}
}

// TestRegistryFailuresAndSecrets: a failing registry is -32012 with the
// status, a cached copy still serves update "check" when the registry is
// unreachable, and no token reaches an error or the log.
func TestRegistryFailuresAndSecrets(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "pkg", Version: "1.0.0"})
	const token = "npm_SECRETSECRETSECRET"
	ws := t.TempDir()
	host := strings.TrimPrefix(reg.URL(), "http:")
	writeFiles(t, ws, map[string]string{".npmrc": "registry=" + reg.URL() + "\n" + host + ":_authToken=" + token + "\n"})
	var logs strings.Builder
	p, _ := newPM(t, ws, nil)
	p.log = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	if _, err := p.Fetch(ctx, npmID("pkg", "1.0.0"), protocol.UpdateCheck); err != nil {
		t.Fatal(err)
	}
	reg.Fail(503)
	_, err := p.Fetch(ctx, npmID("pkg", "^1"), protocol.UpdateFetch)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeRegistry || !strings.Contains(string(pe.Data), `"status":503`) {
		t.Errorf("503: %v", err)
	}
	if _, err := p.Search(ctx, "pkg"); protocol.CodeOf(err) != protocol.CodeRegistry {
		t.Errorf("search on a failing registry: %v", err)
	}
	reg.Close() // unreachable now: check falls back to the cached copy
	if res, err := p.Fetch(ctx, npmID("pkg", "^1"), protocol.UpdateCheck); err != nil || res.ID.Version != "1.0.0" {
		t.Errorf("check with the registry down: %+v %v", res, err)
	}
	if _, err := p.Fetch(ctx, npmID("pkg", "^2"), protocol.UpdateCheck); protocol.CodeOf(err) != protocol.CodeRegistry || strings.Contains(err.Error(), token) {
		t.Errorf("unreachable registry: %v", err)
	}
	if strings.Contains(logs.String(), token) || strings.Contains(fmt.Sprint(err), token) {
		t.Error("the token leaked into the log or an error")
	}
}

// TestFetchNoneInstalledLayouts: fetch with update "none" serves an
// installed copy wherever active_plugins finds it: in a member of a pnpm
// workspace (pnpm-workspace.yaml, no package.json "workspaces"), linked
// into node_modules/.pnpm, and under an alias's name (plug at
// node_modules/lefty); load_plugin resolves the same copies.
func TestFetchNoneInstalledLayouts(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":            `{"name":"mono","version":"1.0.0","private":true,"dependencies":{"lefty":"npm:plug@1.0.0"}}`,
		"pnpm-workspace.yaml":     "packages:\n  - 'packages/*'\n",
		"packages/a/package.json": `{"name":"a","version":"1.0.0","dependencies":{"plug":"2.0.0"}}`,
		"node_modules/.pnpm/plug@1.0.0/node_modules/plug/package.json": `{"name":"plug","version":"1.0.0"}`,
		"node_modules/.pnpm/plug@2.0.0/node_modules/plug/package.json": `{"name":"plug","version":"2.0.0"}`,
	})
	symlinks(t, ws, map[string]string{
		"node_modules/lefty":           ".pnpm/plug@1.0.0/node_modules/plug",
		"packages/a/node_modules/plug": "../../../node_modules/.pnpm/plug@2.0.0/node_modules/plug",
	})
	store := filepath.Join(realPath(t, ws), "node_modules", ".pnpm")
	p, _ := newPM(t, ws, nil)
	ctx := context.Background()
	for _, v := range []string{"1.0.0", "2.0.0"} {
		want := filepath.Join(store, "plug@"+v, "node_modules", "plug")
		res, err := p.Fetch(ctx, npmID("plug", v), protocol.UpdateNone)
		if err != nil || res.Root != want || res.ID.Version != v {
			t.Errorf("fetch plug@%s none: %+v, %v; want the copy at %s", v, res, err, want)
		}
		offers, err := p.LoadPlugin(ctx, npmID("plug", v))
		if err != nil || len(offers) != 1 || offers[0].Root != want {
			t.Errorf("load_plugin plug@%s: %v, %v; want the copy at %s", v, offerIDs(offers), err, want)
		}
	}
}

// TestFetchNonePnpmMemberRealPnpm: in a pnpm 9 workspace installed by real
// pnpm and opened at its root, fetch with update "none" serves the
// member's installed plug@2.0.0 (which active_plugins offers) instead of
// answering -32011.
func TestFetchNonePnpmMemberRealPnpm(t *testing.T) {
	ws := pnpmMemberWorkspace(t, nil)
	want := realPath(t, filepath.Join(ws, "packages", "a", "node_modules", "plug"))
	p, _ := newPM(t, ws, nil)
	offers, err := p.ActivePlugins(context.Background(), []protocol.PackageID{npmID("plug", "2.0.0")})
	if err != nil || len(offers) != 1 || offers[0].Root != want {
		t.Fatalf("active_plugins: %v, %v; want plug@2.0.0 at %s", offerIDs(offers), err, want)
	}
	res, err := p.Fetch(context.Background(), npmID("plug", "2.0.0"), protocol.UpdateNone)
	if err != nil || res.Root != want {
		t.Errorf("fetch plug@2.0.0 none: %+v, %v; want the installed copy at %s", res, err, want)
	}
}
