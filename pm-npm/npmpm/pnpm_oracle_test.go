package npmpm

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// TestOracleListDepsAgainstPnpmLs installs a pnpm 9 monorepo against the fake
// registry with real pnpm, then checks list_deps from pnpm-lock.yaml alone
// against `pnpm ls -r --json --depth 0`: a registry range on a member's
// name that pnpm resolved from the registry, a catalog: dependency on a
// member's name, a member's peer that pnpm auto-installs beside one it
// does not (a peer already declared as a dependency), a tarball URL under
// another name, and a workspace: link.
func TestOracleListDepsAgainstPnpmLs(t *testing.T) {
	reg := oracleRegistry(t, "installs pnpm and runs pnpm install and pnpm ls")
	bins := installTools(t, map[string]string{"pnpm9": "pnpm@9"})
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"package.json": `{"name":"mono","version":"0.0.0","private":true,
		  "dependencies":{"right":"3.0.0","left-url":"` + reg.URL() + `left/-/left-1.1.0.tgz"}}`,
		"pnpm-workspace.yaml": "packages:\n  - 'packages/*'\ncatalog:\n  opt: 0.0.3\n",
		"packages/a/package.json": `{"name":"a","version":"0.1.0",
		  "dependencies":{"left":"^1.0.0","opt":"catalog:","b":"workspace:*"},
		  "peerDependencies":{"peer-thing":">=5","left":"*"}}`,
		"packages/b/package.json":    `{"name":"b","version":"0.2.0","dependencies":{"right":"^2"}}`,
		"packages/left/package.json": `{"name":"left","version":"1.5.0"}`,
		"packages/opt/package.json":  `{"name":"opt","version":"0.0.3"}`,
	})
	runTool(t, reg, dir, bins["pnpm9"], nil, "install", "--ignore-scripts")
	want := pnpmLsDeps(t, reg, dir, bins["pnpm9"])
	if !slices.Contains(want, "peer-thing@5.0.0") || !slices.Contains(want, "opt@0.0.3") {
		t.Fatalf("pnpm did not install the peer or the catalog dependency: %v", want)
	}
	// The lockfile alone must answer.
	if err := exec.Command("rm", "-rf", filepath.Join(dir, "node_modules"), filepath.Join(dir, "packages", "a", "node_modules"), filepath.Join(dir, "packages", "b", "node_modules")).Run(); err != nil {
		t.Fatal(err)
	}
	p, _ := newPM(t, dir, nil)
	got, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, want) {
		t.Errorf("list_deps:\n got  %v\n want %v (pnpm ls)", g, want)
	}
}

// pnpmLsDeps runs `pnpm ls -r --json --depth 0` and returns the projects'
// direct dependencies as name@version, leaving out workspace links.
func pnpmLsDeps(t *testing.T, reg *fakeregistry.Registry, dir, bin string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := fakeregistry.NPMCommand(ctx, reg.URL(), dir, t.TempDir(), bin, "ls", "-r", "--json", "--depth", "0")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	cmd.Path, cmd.Args[0] = node, node
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pnpm ls: %v\n%s", err, out)
	}
	var projects []struct {
		Dependencies, DevDependencies, OptionalDependencies map[string]struct {
			From    string `json:"from"`
			Version string `json:"version"`
		}
	}
	if err := json.Unmarshal(out, &projects); err != nil {
		t.Fatalf("pnpm ls output: %v\n%s", err, out)
	}
	set := map[string]bool{}
	for _, pr := range projects {
		for _, m := range []map[string]struct {
			From    string `json:"from"`
			Version string `json:"version"`
		}{pr.Dependencies, pr.DevDependencies, pr.OptionalDependencies} {
			for name, d := range m {
				if strings.HasPrefix(d.Version, "link:") {
					continue // a workspace member
				}
				if d.From != "" {
					name = d.From
				}
				set[name+"@"+d.Version] = true
			}
		}
	}
	var list []string
	for k := range set {
		list = append(list, k)
	}
	slices.Sort(list)
	return list
}
