package npmpm

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// lsNode is one node of `npm ls --json`.
type lsNode struct {
	Version      string            `json:"version"`
	Resolved     string            `json:"resolved"`
	Dependencies map[string]lsNode `json:"dependencies"`
}

// oracleDeps runs `npm ls --package-lock-only --json --depth=1` and derives
// the direct dependencies of the root and of each workspace member: a
// dependency resolved to "file:" inside the workspace is a member, whose
// own children are its direct dependencies; the real name of an alias is
// read from its tarball URL.
func oracleDeps(t *testing.T, reg *fakeregistry.Registry, dir string) []string {
	t.Helper()
	out := runNPM(t, reg, dir, "ls", "--package-lock-only", "--json", "--depth=1", "--all")
	var root lsNode
	if err := json.Unmarshal(out, &root); err != nil {
		t.Fatalf("npm ls output: %v\n%s", err, out)
	}
	set := map[string]bool{}
	members := map[string]bool{}
	for name, d := range root.Dependencies {
		if strings.HasPrefix(d.Resolved, "file:") {
			members[name] = true
		}
	}
	var walk func(n lsNode, top bool)
	walk = func(n lsNode, top bool) {
		for name, d := range n.Dependencies {
			if strings.HasPrefix(d.Resolved, "file:") || (members[name] && d.Resolved == "") {
				// A workspace member: its children are its direct
				// dependencies; the member itself is part of the workspace,
				// which list_deps does not report.
				if top {
					walk(d, false)
				}
				continue
			}
			set[realName(name, d.Resolved)+"@"+d.Version] = true
		}
	}
	walk(root, true)
	var list []string
	for k := range set {
		list = append(list, k)
	}
	slices.Sort(list)
	return list
}

// realName extracts the package name from a registry tarball URL
// ("http://host/@scope/name/-/name-1.0.0.tgz"), else returns name.
func realName(name, resolved string) string {
	u, err := url.Parse(resolved)
	if err != nil {
		return name
	}
	p, _, ok := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/-/")
	if !ok {
		return name
	}
	if un, err := url.PathUnescape(p); err == nil {
		return un
	}
	return p
}

// publishUniverse publishes a small dependency universe.
func publishUniverse(reg *fakeregistry.Registry) {
	for _, v := range []string{"1.0.0", "1.1.0", "1.2.0", "2.0.0", "2.1.0-beta.1"} {
		reg.Publish(fakeregistry.Version{Name: "left", Version: v})
	}
	reg.Publish(fakeregistry.Version{Name: "right", Version: "2.0.0", Dependencies: map[string]string{"left": "^1.0.0"}})
	reg.Publish(fakeregistry.Version{Name: "right", Version: "3.0.0", Dependencies: map[string]string{"left": "^2.0.0"}})
	reg.Publish(fakeregistry.Version{Name: "@acme/widget", Version: "0.3.1"})
	reg.Publish(fakeregistry.Version{Name: "@acme/widget", Version: "0.4.0"})
	reg.Publish(fakeregistry.Version{Name: "peer-thing", Version: "5.0.0"})
	reg.Publish(fakeregistry.Version{Name: "opt", Version: "0.0.3"})
	reg.Publish(fakeregistry.Version{Name: "tagged", Version: "1.0.0"})
	reg.Publish(fakeregistry.Version{Name: "tagged", Version: "2.0.0-rc.1", Tag: "next"})
}

func TestOracleListDepsAgainstNPMLs(t *testing.T) {
	reg := oracleRegistry(t, "runs npm install and npm ls on every project")

	rootPkg := `{"name":"app","version":"1.0.0",
	  "dependencies":{"right":"^2.0.0","lefty":"npm:left@~1.1.0","@acme/widget":"~0.3.0","tagged":"next"},
	  "devDependencies":{"left":"^1"},
	  "optionalDependencies":{"opt":"*"},
	  "peerDependencies":{"peer-thing":">=5"}}`
	wsPkg := `{"name":"mono","version":"0.0.0","private":true,"workspaces":["packages/*","tools/**"],
	  "dependencies":{"right":"3.0.0","a":"^0.1.0"}}`
	cases := []struct {
		name  string
		files map[string]string
		args  []string
	}{
		{"v3", map[string]string{"package.json": rootPkg}, nil},
		{"v2", map[string]string{"package.json": rootPkg}, []string{"--lockfile-version=2"}},
		{"v1", map[string]string{"package.json": rootPkg}, []string{"--lockfile-version=1"}},
		{"workspaces", map[string]string{
			"package.json":              wsPkg,
			"packages/a/package.json":   `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0","@acme/widget":"0.4.0"}}`,
			"packages/b/package.json":   `{"name":"b","version":"0.2.0","dependencies":{"a":"*","right":"^2"},"devDependencies":{"lefty":"npm:left@^2.0.0"}}`,
			"tools/deep/c/package.json": `{"name":"@mono/c","version":"1.0.0","dependencies":{"opt":"0.0.3"}}`,
		}, nil},
		{"workspaces v1", map[string]string{
			"package.json":              wsPkg,
			"packages/a/package.json":   `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0","@acme/widget":"0.4.0"}}`,
			"packages/b/package.json":   `{"name":"b","version":"0.2.0","dependencies":{"a":"*","right":"^2"},"devDependencies":{"lefty":"npm:left@^2.0.0"}}`,
			"tools/deep/c/package.json": `{"name":"@mono/c","version":"1.0.0","dependencies":{"opt":"0.0.3"}}`,
		}, []string{"--lockfile-version=1"}},
		{"shrinkwrap", map[string]string{"package.json": rootPkg}, []string{"shrinkwrap"}},
		// package.json read as npm reads it, with JSON.parse: "Dependencies",
		// "DevDependencies" and "Workspaces" are none of npm's, and packages/a
		// is no member.
		{"package.json keys as JSON.parse reads them", map[string]string{
			"package.json": `{"name":"app","version":"1.0.0","dependencies":{"right":"^2.0.0"},"Dependencies":{"left":"^1"},
			  "devDependencies":{"opt":"*"},"DevDependencies":{"tagged":"next"},"Workspaces":["packages/*"]}`,
			"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"@acme/widget":"0.4.0"}}`,
		}, nil},
		// A real install, then no lockfile: node_modules alone must answer.
		{"node_modules only", map[string]string{
			"package.json":            wsPkg,
			"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0","@acme/widget":"0.4.0"}}`,
			"packages/b/package.json": `{"name":"b","version":"0.2.0","dependencies":{"a":"*","right":"^2"},"devDependencies":{"lefty":"npm:left@^2.0.0"}}`,
		}, []string{"install"}},
	}
	// A tarball URL dependency under another name, installed then read from
	// node_modules alone (npm records the package's own name).
	cases = append(cases, struct {
		name  string
		files map[string]string
		args  []string
	}{"url dependency, node_modules only", map[string]string{
		"package.json": `{"name":"app","version":"1.0.0","dependencies":{"left-url":"` + reg.URL() + `left/-/left-1.1.0.tgz","right":"^2"}}`,
	}, []string{"install"}})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			if len(tc.args) == 1 && tc.args[0] == "shrinkwrap" {
				runNPM(t, reg, dir, "install", "--package-lock-only")
				runNPM(t, reg, dir, "shrinkwrap")
				if _, err := os.Stat(filepath.Join(dir, "npm-shrinkwrap.json")); err != nil {
					t.Fatal(err)
				}
			} else if len(tc.args) == 1 && tc.args[0] == "install" {
				runNPM(t, reg, dir, "install")
			} else {
				runNPM(t, reg, dir, append([]string{"install", "--package-lock-only"}, tc.args...)...)
			}
			want := oracleDeps(t, reg, dir)
			if tc.args != nil && tc.args[0] == "install" {
				if err := os.Remove(filepath.Join(dir, "package-lock.json")); err != nil {
					t.Fatal(err)
				}
			}
			p, _ := newPM(t, dir, nil)
			got, err := p.ListDeps(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if g := ids(got); !slices.Equal(g, want) {
				t.Errorf("list_deps:\n got  %v\n want %v (npm ls)", g, want)
			}
		})
	}
}
