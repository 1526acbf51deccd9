package npmpm

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// These tests hold active_plugins to list_deps: every package list_deps
// names is found where the installer put it, as Node resolves it.

const layoutSkill = "---\nname: s\ndescription: d\n---\n"

// realPath is path with symbolic links resolved (an offer's root is the
// real directory).
func realPath(t *testing.T, path string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// symlinks creates link → target (relative to the link's directory) under
// dir, or skips the test where links cannot be made.
func symlinks(t *testing.T, dir string, links map[string]string) {
	t.Helper()
	for link, target := range links {
		l := filepath.Join(dir, filepath.FromSlash(link))
		if err := os.MkdirAll(filepath.Dir(l), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.FromSlash(target), l); err != nil {
			t.Skip("no symbolic links:", err)
		}
	}
}

// TestActivePluginsAliases: a dependency installed under another name —
// an alias ("lefty": "npm:plug@1.0.0", at node_modules/lefty in npm's
// layout, a link into node_modules/.pnpm in pnpm's, scoped or not) or a
// tarball URL ("ms-url": "https://…/ms-2.0.0.tgz") — is listed by
// list_deps under its real name, and active_plugins finds it in the entry
// it was declared as. A node_modules entry named like a wanted package but
// holding another one (an alias "plug": "npm:imposter@1.0.0") is not that
// package.
func TestActivePluginsAliases(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"lefty":"npm:plug@1.0.0","plug":"npm:imposter@1.0.0",
			"ms-url":"https://registry.invalid/ms/-/ms-2.0.0.tgz","piped":"npm:pnpm-plug@2.0.0","@x/al":"npm:@sc/plug@2.0.0"}}`,
		"node_modules/lefty/package.json":      `{"name":"plug","version":"1.0.0"}`,
		"node_modules/lefty/skills/s/SKILL.md": layoutSkill,
		"node_modules/plug/package.json":       `{"name":"imposter","version":"1.0.0"}`,
		"node_modules/plug/skills/s/SKILL.md":  layoutSkill,
		"node_modules/ms-url/package.json":     `{"name":"ms","version":"2.0.0"}`,
		"node_modules/ms-url/SYMPOSIUM.toml":   "",
		// pnpm's layout: the entry links into node_modules/.pnpm.
		"node_modules/.pnpm/pnpm-plug@2.0.0/node_modules/pnpm-plug/package.json":    `{"name":"pnpm-plug","version":"2.0.0"}`,
		"node_modules/.pnpm/pnpm-plug@2.0.0/node_modules/pnpm-plug/SYMPOSIUM.toml":  "",
		"node_modules/.pnpm/@sc+plug@2.0.0/node_modules/@sc/plug/package.json":      `{"name":"@sc/plug","version":"2.0.0"}`,
		"node_modules/.pnpm/@sc+plug@2.0.0/node_modules/@sc/plug/skills/s/SKILL.md": layoutSkill,
	})
	symlinks(t, ws, map[string]string{
		"node_modules/piped": ".pnpm/pnpm-plug@2.0.0/node_modules/pnpm-plug",
		"node_modules/@x/al": "../.pnpm/@sc+plug@2.0.0/node_modules/@sc/plug",
	})
	deps, offers := listThenActive(t, ws)
	if want := []string{"@sc/plug@2.0.0", "imposter@1.0.0", "ms@2.0.0", "plug@1.0.0", "pnpm-plug@2.0.0"}; !slices.Equal(ids(deps), want) {
		t.Fatalf("list_deps %v, want %v", ids(deps), want)
	}
	nm := filepath.Join(realPath(t, ws), "node_modules")
	want := []string{
		"@sc/plug@2.0.0 " + filepath.Join(nm, ".pnpm", "@sc+plug@2.0.0", "node_modules", "@sc", "plug"),
		"imposter@1.0.0 " + filepath.Join(nm, "plug"),
		"ms@2.0.0 " + filepath.Join(nm, "ms-url"),
		"plug@1.0.0 " + filepath.Join(nm, "lefty"),
		"pnpm-plug@2.0.0 " + filepath.Join(nm, ".pnpm", "pnpm-plug@2.0.0", "node_modules", "pnpm-plug"),
	}
	if got := offerIDs(offers); !slices.Equal(got, want) {
		t.Errorf("active_plugins:\n got  %v\n want %v", got, want)
	}
}

// TestActivePluginsAliasRealNPM: real npm installs an aliased dependency
// ("lefty": "npm:plug@1.0.0") at node_modules/lefty; list_deps lists it as
// plug@1.0.0, and active_plugins, given that answer, offers the copy
// there.
func TestActivePluginsAliasRealNPM(t *testing.T) {
	reg := oracleRegistry(t, "runs npm install")
	publishPlugins(reg)
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"lefty":"npm:plug@1.0.0"}}`,
	})
	runNPM(t, reg, ws, "install", "--ignore-scripts")
	at := filepath.Join(realPath(t, ws), "node_modules", "lefty")
	if r := nodeResolve(t, ws, "lefty"); r != filepath.Join(at, "package.json") {
		t.Fatalf("node resolves lefty to %q, not in %s", r, at)
	}
	deps, offers := listThenActive(t, ws)
	if want := []string{"plug@1.0.0 " + at}; !slices.Equal(offerIDs(offers), want) {
		t.Errorf("list_deps %v; active_plugins %v, want %v", ids(deps), offerIDs(offers), want)
	}
}

// nonMemberWorkspace is a workspace whose root depends on plug 1.0.0 and
// whose member packages/a on plug 2.0.0, with a directory docs/ that
// belongs to no member.
var nonMemberWorkspace = map[string]string{
	"package.json":            `{"name":"mono","version":"1.0.0","private":true,"workspaces":["packages/*"],"dependencies":{"plug":"1.0.0"}}`,
	"packages/a/package.json": `{"name":"a","version":"1.0.0","dependencies":{"plug":"2.0.0"}}`,
	"docs/README.md":          "docs\n",
}

// sameFromRootAndDocs checks that list_deps and active_plugins opened from
// ws/docs answer as opened from ws, and that the answer holds want offers.
func sameFromRootAndDocs(t *testing.T, ws string, want int) {
	t.Helper()
	rootDeps, rootOffers := listThenActive(t, ws)
	deps, offers := listThenActive(t, filepath.Join(ws, "docs"))
	if !slices.Equal(ids(deps), ids(rootDeps)) {
		t.Fatalf("list_deps from docs/ %v, from the root %v", ids(deps), ids(rootDeps))
	}
	if !slices.Equal(offerIDs(offers), offerIDs(rootOffers)) {
		t.Errorf("active_plugins from docs/ %v; from the root %v", offerIDs(offers), offerIDs(rootOffers))
	}
	if len(rootOffers) != want {
		t.Errorf("active_plugins from the root %v for %v, want %d offers", offerIDs(rootOffers), ids(rootDeps), want)
	}
}

// TestActivePluginsFromNonMemberDir: opened from a directory under the
// workspace root that belongs to no member (docs/), list_deps answers for
// the whole workspace, and active_plugins finds that answer's packages
// where they are installed, a member's own node_modules included, as
// opened from the root.
func TestActivePluginsFromNonMemberDir(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, nonMemberWorkspace)
	writeFiles(t, ws, map[string]string{
		"node_modules/plug/package.json":                 `{"name":"plug","version":"1.0.0"}`,
		"node_modules/plug/skills/s/SKILL.md":            layoutSkill,
		"packages/a/node_modules/plug/package.json":      `{"name":"plug","version":"2.0.0"}`,
		"packages/a/node_modules/plug/skills/s/SKILL.md": layoutSkill,
	})
	symlinks(t, ws, map[string]string{"node_modules/a": "../packages/a"})
	sameFromRootAndDocs(t, ws, 2)
}

// TestActivePluginsFromNonMemberDirRealNPM is TestActivePluginsFromNonMemberDir
// installed by real npm, which puts the member's plug 2.0.0 in the
// member's own node_modules.
func TestActivePluginsFromNonMemberDirRealNPM(t *testing.T) {
	reg := oracleRegistry(t, "runs npm install on a workspace")
	publishPlugins(reg)
	ws := t.TempDir()
	writeFiles(t, ws, nonMemberWorkspace)
	runNPM(t, reg, ws, "install", "--ignore-scripts")
	if r := nodeResolve(t, filepath.Join(ws, "packages", "a"), "plug"); !strings.Contains(r, filepath.Join("packages", "a", "node_modules")) {
		t.Fatalf("node resolves plug from packages/a to %q, not the member's own copy", r)
	}
	sameFromRootAndDocs(t, ws, 2)
}

// TestActivePluginsFromNonMemberDirRealPnpm is the same with real pnpm 9,
// which links a member's dependencies only from the member's own
// node_modules (into node_modules/.pnpm) and reads its members from
// pnpm-workspace.yaml.
func TestActivePluginsFromNonMemberDirRealPnpm(t *testing.T) {
	ws := pnpmMemberWorkspace(t, map[string]string{"docs/README.md": "docs\n"})
	sameFromRootAndDocs(t, ws, 1)
}

// pnpmMemberWorkspace installs with real pnpm 9 a workspace whose one
// member, packages/a, depends on plug@2.0.0 (from the oracle registry),
// with extra files besides, and returns its root.
func pnpmMemberWorkspace(t *testing.T, extra map[string]string) string {
	t.Helper()
	reg := oracleRegistry(t, "installs pnpm and runs pnpm install on a workspace")
	publishPlugins(reg)
	bins := installSharedTools(t)
	ws := t.TempDir()
	files := map[string]string{
		"package.json":            `{"name":"mono","version":"1.0.0","private":true}`,
		"pnpm-workspace.yaml":     "packages:\n  - 'packages/*'\n",
		"packages/a/package.json": `{"name":"a","version":"1.0.0","dependencies":{"plug":"2.0.0"}}`,
	}
	maps.Copy(files, extra)
	writeFiles(t, ws, files)
	runTool(t, reg, ws, bins["pnpm9"], nil, "install", "--ignore-scripts")
	return ws
}

// TestActivePluginsIntermediateNodeModules: in a tree made by hand (no
// lockfile, no installer record), the member packages/a's dependency is
// installed in packages/node_modules, between the member and the root,
// where Node's resolution from packages/a finds it and list_deps reads its
// version; active_plugins offers that copy.
func TestActivePluginsIntermediateNodeModules(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":                                 `{"name":"mono","private":true,"workspaces":["packages/*"]}`,
		"packages/a/package.json":                      `{"name":"a","version":"1.0.0","dependencies":{"plug":"^1"}}`,
		"packages/node_modules/plug/package.json":      `{"name":"plug","version":"1.0.0"}`,
		"packages/node_modules/plug/skills/s/SKILL.md": layoutSkill,
	})
	deps, offers := listThenActive(t, ws)
	want := []string{"plug@1.0.0 " + filepath.Join(realPath(t, ws), "packages", "node_modules", "plug")}
	if !slices.Equal(offerIDs(offers), want) {
		t.Errorf("list_deps %v; active_plugins %v, want %v", ids(deps), offerIDs(offers), want)
	}
}

// TestActivePluginsVersionPrefixed: an installed package.json may write
// its version as node-semver reads it, "v1.0.0"; npm locks it as 1.0.0,
// and active_plugins asked for 1.0.0 offers it under the version asked.
func TestActivePluginsVersionPrefixed(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":                         `{"name":"app","version":"1.0.0","dependencies":{"vplug":"^1.0.0"}}`,
		"node_modules/vplug/package.json":      `{"name":"vplug","version":"v1.0.0"}`,
		"node_modules/vplug/skills/s/SKILL.md": layoutSkill,
	})
	p, _ := newPM(t, ws, nil)
	offers, err := p.ActivePlugins(context.Background(), []protocol.PackageID{npmID("vplug", "1.0.0"), npmID("vplug", "1.0.1")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"vplug@1.0.0 " + filepath.Join(realPath(t, ws), "node_modules", "vplug")}
	if !slices.Equal(offerIDs(offers), want) {
		t.Errorf("active_plugins %v, want %v", offerIDs(offers), want)
	}
}

// TestActivePluginsVersionPrefixedRealNPM: real npm installs a tarball
// whose package.json says "v1.0.0" and locks it as 1.0.0, which list_deps
// reports; active_plugins offers it.
func TestActivePluginsVersionPrefixedRealNPM(t *testing.T) {
	reg := oracleRegistry(t, "runs npm install")
	reg.Publish(fakeregistry.Version{Name: "vplug", Version: "1.0.0", Files: map[string]string{
		"package.json":      `{"name":"vplug","version":"v1.0.0"}`,
		"skills/s/SKILL.md": layoutSkill,
	}})
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"package.json": `{"name":"app","version":"1.0.0","dependencies":{"vplug":"^1.0.0"}}`})
	runNPM(t, reg, ws, "install", "--ignore-scripts")
	deps, offers := listThenActive(t, ws)
	if !slices.Equal(ids(deps), []string{"vplug@1.0.0"}) {
		t.Fatalf("list_deps %v, want vplug@1.0.0 (npm's lock)", ids(deps))
	}
	want := []string{"vplug@1.0.0 " + filepath.Join(realPath(t, ws), "node_modules", "vplug")}
	if !slices.Equal(offerIDs(offers), want) {
		t.Errorf("active_plugins %v, want %v", offerIDs(offers), want)
	}
}

// TestActivePluginsFindsWhatNodeResolves installs a workspace with real
// npm (members under two globs, a nested one, member-specific versions,
// scoped, dev, optional and peer dependencies, and aliases, one of a
// version installed under no other name) and
// checks, for every dependency each package.json declares, that the
// package Node resolves from its directory is listed by list_deps (by its
// real name and version) and offered by active_plugins.
func TestActivePluginsFindsWhatNodeResolves(t *testing.T) {
	reg := oracleRegistry(t, "runs npm install on a workspace")
	publishPlugins(reg)
	for _, v := range []string{"1.0.0", "2.0.0"} {
		for _, n := range []string{"@sc/plug", "peer-p", "opt-p"} {
			reg.Publish(fakeregistry.Version{Name: n, Version: v, Files: map[string]string{"skills/s/SKILL.md": layoutSkill}})
		}
	}
	ws := t.TempDir()
	files := map[string]string{
		"package.json":            `{"name":"mono","version":"1.0.0","private":true,"workspaces":["packages/*","tools/**"],"dependencies":{"plug":"1.0.0","@sc/plug":"2.0.0"},"devDependencies":{"peer-p":"2.0.0"}}`,
		"packages/a/package.json": `{"name":"a","version":"1.0.0","dependencies":{"plug":"2.0.0","@sc/plug":"1.0.0"},"optionalDependencies":{"opt-p":"2.0.0"}}`,
		"packages/b/package.json": `{"name":"b","version":"1.0.0","dependencies":{"a":"*"},"devDependencies":{"@sc/plug":"^1"},"peerDependencies":{"peer-p":"^2"}}`,
		"packages/c/package.json": `{"name":"c","version":"1.0.0","dependencies":{"ali":"npm:opt-p@1.0.0","@sc/ali":"npm:@sc/plug@2.0.0"}}`,
		"tools/x/y/package.json":  `{"name":"@mono/y","version":"1.0.0","dependencies":{"plug":"^2"}}`,
	}
	writeFiles(t, ws, files)
	runNPM(t, reg, ws, "install", "--ignore-scripts")
	deps, offers := listThenActive(t, ws)
	offered := map[string]bool{}
	for _, o := range offers {
		offered[o.ID.Name+"@"+o.ID.Version] = true
	}
	checked := 0
	for f := range files {
		dir := filepath.Join(ws, filepath.Dir(f))
		var pj struct {
			Dependencies, DevDependencies, OptionalDependencies, PeerDependencies map[string]string
		}
		data, err := os.ReadFile(filepath.Join(ws, f))
		if err != nil || json.Unmarshal(data, &pj) != nil {
			t.Fatal(f, err)
		}
		for _, m := range []map[string]string{pj.Dependencies, pj.DevDependencies, pj.OptionalDependencies, pj.PeerDependencies} {
			for name := range m {
				r := nodeResolve(t, dir, name)
				if r == "" {
					t.Errorf("%s: node resolves no %s", f, name)
					continue
				}
				if real := realPath(t, filepath.Dir(r)); !strings.Contains(real, "node_modules") {
					continue // a workspace member
				}
				var got struct{ Name, Version string }
				if data, err := os.ReadFile(r); err != nil || json.Unmarshal(data, &got) != nil {
					t.Fatal(r, err)
				}
				id := got.Name + "@" + got.Version
				checked++
				if !slices.Contains(ids(deps), id) {
					t.Errorf("%s: node resolves %s to %s (%s); list_deps %v lacks it", f, name, id, r, ids(deps))
				}
				if !offered[id] {
					t.Errorf("%s: node resolves %s to %s (%s); active_plugins does not offer it", f, name, id, r)
				}
			}
		}
	}
	if checked < 10 {
		t.Errorf("only %d dependencies resolved by node were checked", checked)
	}
}
