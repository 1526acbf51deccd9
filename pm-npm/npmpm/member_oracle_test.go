package npmpm

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestListDepsFromMemberAgainstNPMLs opens an npm workspaces monorepo from
// inside it — a member, a directory under a member, a member matched by
// "**", a directory between the root and the members that has no
// package.json — in every lockfile version, and compares list_deps with
// `npm ls` run in that directory: npm walks up to the workspace root,
// reads the root's lockfile and lists the member's own dependencies (the
// whole workspace from a directory that belongs to no member). workspace
// from each of them must name the root and every member.
func TestListDepsFromMemberAgainstNPMLs(t *testing.T) {
	needNPM(t)
	t.Parallel()
	reg := fakeregistry.New()
	t.Cleanup(reg.Close)
	publishUniverse(reg)
	files := map[string]string{
		"package.json": `{"name":"mono","version":"0.0.0","private":true,"workspaces":["packages/*","tools/**"],
		  "dependencies":{"right":"3.0.0","a":"^0.1.0"}}`,
		"packages/a/package.json":   `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0","@acme/widget":"0.4.0"},"peerDependencies":{"peer-thing":">=5"}}`,
		"packages/a/src/index.js":   "",
		"packages/b/package.json":   `{"name":"b","version":"0.2.0","dependencies":{"a":"*","right":"^2"},"devDependencies":{"lefty":"npm:left@^2.0.0"}}`,
		"tools/deep/c/package.json": `{"name":"@mono/c","version":"1.0.0","dependencies":{"opt":"0.0.3","tagged":"next"}}`,
		"tools/README":              "",
	}
	from := []string{"packages/a", "packages/a/src", "packages/b", "tools/deep/c", "tools"}
	for _, lv := range []string{"1", "2", "3"} {
		t.Run("lockfile v"+lv, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, files)
			runNPM(t, reg, dir, "install", "--package-lock-only", "--lockfile-version="+lv)
			rootDeps := oracleDeps(t, reg, dir)
			root, _ := newPM(t, dir, nil)
			wantWS, err := root.Workspace(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(wantWS.Members) != 4 {
				t.Fatalf("workspace from the root: %+v, want the root and 3 members", wantWS)
			}
			for _, sub := range from {
				want := oracleDeps(t, reg, filepath.Join(dir, filepath.FromSlash(sub)))
				if lv == "1" && sub == "tools/deep/c" {
					// npm 11 loses a member two directories deep from a
					// version 1 lockfile when asked for it alone (from its
					// directory or with -w: it lists nothing), though npm ls
					// at the root lists its dependencies: those are the
					// oracle here.
					if len(want) != 0 {
						t.Fatalf("npm ls from %s now lists %v: drop this special case", sub, want)
					}
					want = []string{"opt@0.0.3", "tagged@2.0.0-rc.1"}
					for _, w := range want {
						if !slices.Contains(rootDeps, w) {
							t.Fatalf("npm ls at the root: %v, want %s among them", rootDeps, w)
						}
					}
				}
				if sub == "tools" && !slices.Equal(want, rootDeps) {
					t.Fatalf("npm ls from %s: %v, want the whole workspace %v", sub, want, rootDeps)
				}
				if len(want) == 0 {
					t.Fatalf("npm ls from %s lists nothing", sub)
				}
				p, _ := newPM(t, filepath.Join(dir, filepath.FromSlash(sub)), nil)
				got, err := p.ListDeps(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if g := ids(got); !slices.Equal(g, want) {
					t.Errorf("list_deps from %s:\n got  %v\n want %v (npm ls there)", sub, g, want)
				}
				ws, err := p.Workspace(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if ws.Root != wantWS.Root || !slices.Equal(ws.Members, wantWS.Members) {
					t.Errorf("workspace from %s:\n got  %+v\n want %+v", sub, ws, wantWS)
				}
			}
		})
	}
}

// TestListDepsFromMemberTable covers what npm ls cannot answer: a package
// under the root that no workspace pattern includes is its own project (npm
// finds no lockfile there), a root whose package.json does not parse is
// passed over, a pnpm workspace root without package.json, and the nearest
// including root wins over an outer one. Versions come from the
// lockfile of the root that was found.
func TestListDepsFromMemberTable(t *testing.T) {
	lock := `{"name":"mono","lockfileVersion":3,"packages":{
	  "":{"name":"mono","workspaces":["packages/*"]},
	  "packages/a":{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0"}},
	  "node_modules/a":{"resolved":"packages/a","link":true},
	  "node_modules/left":{"version":"1.0.0"},
	  "node_modules/right":{"version":"2.0.0"}}}`
	pnpmLock := "lockfileVersion: '9.0'\n\nimporters:\n\n  .: {}\n\n  packages/a:\n    dependencies:\n      left:\n        specifier: ^1.0.0\n        version: 1.2.0\n"
	cases := []struct {
		name   string
		files  map[string]string
		from   string
		want   []string
		wantWS string // the workspace root, relative
	}{
		{"member of an npm workspace", map[string]string{
			"package.json":            `{"name":"mono","workspaces":["packages/*"]}`,
			"package-lock.json":       lock,
			"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0"}}`,
		}, "packages/a", []string{"left@1.0.0"}, ""},
		{"package no pattern includes", map[string]string{
			"package.json":              `{"name":"mono","workspaces":["packages/*"]}`,
			"package-lock.json":         lock,
			"packages/a/package.json":   `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0"}}`,
			"other/x/package.json":      `{"name":"x","dependencies":{"right":"^2"}}`,
			"packages/a/x/package.json": `{"name":"x2","dependencies":{"right":"^2"}}`,
		}, "other/x", []string{"right@*"}, "other/x"},
		{"nested package inside a member, not a member", map[string]string{
			"package.json":              `{"name":"mono","workspaces":["packages/*"]}`,
			"package-lock.json":         lock,
			"packages/a/package.json":   `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0"}}`,
			"packages/a/x/package.json": `{"name":"x2","dependencies":{"right":"^2"}}`,
		}, "packages/a/x", []string{"right@*"}, "packages/a/x"},
		{"root package.json does not parse", map[string]string{
			"package.json":            `{"name":"mono","workspaces":["packages/*"]`,
			"package-lock.json":       lock,
			"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0"}}`,
		}, "packages/a", []string{"left@*"}, "packages/a"},
		{"pnpm root without package.json", map[string]string{
			"pnpm-workspace.yaml":     "packages:\n  - 'packages/*'\n",
			"pnpm-lock.yaml":          pnpmLock,
			"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"^1.0.0"}}`,
		}, "packages/a/lib", []string{"left@1.2.0"}, ""},
		{"nearest including root wins", map[string]string{
			"package.json":                  `{"name":"outer","workspaces":["inner/packages/*"]}`,
			"inner/package.json":            `{"name":"mono","workspaces":["packages/*"]}`,
			"inner/package-lock.json":       lock,
			"inner/packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0"}}`,
		}, "inner/packages/a", []string{"left@1.0.0"}, "inner"},
		{"an outer root when the nearer one does not include it", map[string]string{
			"package.json":                  `{"name":"outer","workspaces":["inner/packages/*"]}`,
			"package-lock.json":             `{"name":"outer","lockfileVersion":3,"packages":{"":{"name":"outer"},"inner/packages/a":{"name":"a","version":"0.1.0"},"node_modules/left":{"version":"1.2.0"}}}`,
			"inner/package.json":            `{"name":"mono","workspaces":["other/*"]}`,
			"inner/packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"^1.0.0"}}`,
		}, "inner/packages/a", []string{"left@1.2.0"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			start := filepath.Join(dir, filepath.FromSlash(tc.from))
			if err := os.MkdirAll(start, 0o755); err != nil {
				t.Fatal(err)
			}
			p, _ := newPM(t, start, nil)
			got, err := p.ListDeps(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got); !slices.Equal(g, tc.want) {
				t.Errorf("list_deps from %s: got %v, want %v", tc.from, g, tc.want)
			}
			ws, err := p.Workspace(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, filepath.FromSlash(tc.wantWS)); ws.Root != want {
				t.Errorf("workspace root from %s: %s, want %s", tc.from, ws.Root, want)
			}
		})
	}
}

// TestListDepsFromMemberCacheFollowsTheRoot checks that the persisted
// answer for a member directory is keyed on the root's files: a lockfile
// written at the root after the first answer changes the next one.
func TestListDepsFromMemberCacheFollowsTheRoot(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"package.json":            `{"name":"mono","workspaces":["packages/*"]}`,
		"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"^1.0.0"}}`,
	})
	member := filepath.Join(dir, "packages", "a")
	p, cache := newPM(t, member, nil)
	got, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, []string{"left@*"}) {
		t.Fatalf("before the lockfile: %v", g)
	}
	writeFiles(t, dir, map[string]string{"package-lock.json": `{"name":"mono","lockfileVersion":3,"packages":{
	  "":{"name":"mono"},"packages/a":{"name":"a","version":"0.1.0"},"node_modules/left":{"version":"1.3.0"}}}`})
	q := New()
	if err := q.Initialize(context.Background(), &pmserver.Session{ProtocolVersion: protocol.Version, Workspace: member,
		CacheDir: cache, Env: pmserver.NewEnv(map[string]string{"HOME": t.TempDir()})}); err != nil {
		t.Fatal(err)
	}
	got, err = q.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, []string{"left@1.3.0"}) {
		t.Errorf("after the root's lockfile appeared: %v, want [left@1.3.0]", g)
	}
}

// TestNpmrcFromMember: opened from inside a workspace member, the project
// configuration is the workspace root's .npmrc, as npm reads it (npm
// ignores a member's own .npmrc there); from a package of its own, that
// package's .npmrc.
func TestNpmrcFromMember(t *testing.T) {
	reg := fakeregistry.New()
	t.Cleanup(reg.Close)
	reg.Publish(fakeregistry.Version{Name: "@corp/private", Version: "1.0.0"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".npmrc":                  "@corp:registry=" + reg.URL() + "\n",
		"package.json":            `{"name":"mono","workspaces":["packages/*"]}`,
		"packages/a/package.json": `{"name":"a","version":"0.1.0"}`,
		"packages/a/.npmrc":       "@corp:registry=http://127.0.0.1:9/\n",
		"packages/a/src/x.js":     "",
	})
	for _, from := range []string{"packages/a", "packages/a/src"} {
		p, _ := newPM(t, filepath.Join(dir, filepath.FromSlash(from)), nil)
		res, err := p.Fetch(context.Background(), npmID("@corp/private", "*"), protocol.UpdateCheck)
		if err != nil || res.ID.Version != "1.0.0" {
			t.Errorf("fetch from %s: %+v %v, want 1.0.0 from the registry the root's .npmrc names", from, res, err)
		}
	}
}
