package npmpm

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// These tests hold what list_deps and active_plugins read from JSON files
// to what npm reads, with JSON.parse: a member counts only under its exact
// name, and a repeated name's last value wins.

// v1ExactKeysWorkspace is a workspace locked by a v1 package-lock.json
// whose entries repeat and vary the case of their keys: the root's b
// says "version" then "Version"; member a's link entry nests its own
// dependencies under "dependencies", then "Dependencies", then
// "dependencies" again, of which npm reads the last alone.
var v1ExactKeysWorkspace = map[string]string{
	"package.json":            `{"name":"mono","version":"0.0.0","workspaces":["packages/*"],"dependencies":{"a":"*","b":"^1.0.0"}}`,
	"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"^1.0.0","right":"^2.0.0","mid":"^1.0.0"}}`,
	"package-lock.json": `{"name":"mono","version":"0.0.0","lockfileVersion":1,"requires":true,"dependencies":{
 "a":{"version":"file:packages/a","requires":{"left":"^1.0.0","right":"^2.0.0","mid":"^1.0.0"},
      "dependencies":{"left":{"version":"1.0.0","resolved":"http://r.invalid/left/-/left-1.0.0.tgz","integrity":"sha512-AAAA"}},
      "Dependencies":{"mid":{"version":"1.5.0","resolved":"http://r.invalid/mid/-/mid-1.5.0.tgz","integrity":"sha512-AAAA"}},
      "dependencies":{"right":{"version":"2.0.0","resolved":"http://r.invalid/right/-/right-2.0.0.tgz","integrity":"sha512-AAAA"}}},
 "b":{"version":"1.0.0","Version":"1.9.9","resolved":"http://r.invalid/b/-/b-1.0.0.tgz","integrity":"sha512-AAAA","Dev":true},
 "left":{"version":"1.2.0","resolved":"http://r.invalid/left/-/left-1.2.0.tgz","integrity":"sha512-AAAA"},
 "mid":{"version":"1.1.0","resolved":"http://r.invalid/mid/-/mid-1.1.0.tgz","integrity":"sha512-AAAA"}
}}
`,
}

// TestListDepsV1ExactKeys: list_deps reads a v1 lockfile as npm does,
// which `npm ls --package-lock-only` shows when npm is installed (it reads
// the lockfile alone, offline): b is 1.0.0, not the "Version" after it;
// member a's left and mid are the root's, hoisted, and its right the one
// of its last "dependencies".
func TestListDepsV1ExactKeys(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, v1ExactKeysWorkspace)
	want := []string{"b@1.0.0", "left@1.2.0", "mid@1.1.0", "right@2.0.0"}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Log("npm not installed: the lockfile is not read by npm ls")
	} else {
		reg := fakeregistry.New() // serves nothing: npm ls reads the lockfile alone
		defer reg.Close()
		if got := oracleDeps(t, reg, ws); !slices.Equal(got, want) {
			t.Fatalf("npm ls reads %v, the test wants %v", got, want)
		}
	}
	p, _ := newPM(t, ws, nil)
	deps, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(deps); !slices.Equal(got, want) {
		t.Errorf("list_deps %v, want %v", got, want)
	}
}

// TestInstalledPackageJSONExactKeys: an installed package.json is read
// as npm and Node read it: its "Name", "Version" and "Symposium" are not
// its name, version and plugin. With no lockfile, list_deps gives the
// version npm ls reads from node_modules (checked with npm when
// installed), and active_plugins offers the package its "name" names but
// not one whose only plugin declaration is a "Symposium".
func TestInstalledPackageJSONExactKeys(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":                        `{"name":"app","version":"1.0.0","dependencies":{"plug":"^1.0.0","symp":"^1.0.0"}}`,
		"node_modules/plug/package.json":      `{"name":"plug","Name":"other","version":"1.0.0","Version":"9.9.9"}`,
		"node_modules/plug/skills/s/SKILL.md": layoutSkill,
		"node_modules/symp/package.json":      `{"name":"symp","version":"1.0.0","Symposium":{"skills":[{"source":{"path":"docs"}}]}}`,
		"node_modules/symp/docs/s/SKILL.md":   layoutSkill,
	})
	want := []string{"plug@1.0.0", "symp@1.0.0"}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Log("npm not installed: node_modules is not read by npm ls")
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		out, err := fakeregistry.NPMCommand(ctx, "http://127.0.0.1:9/", ws, t.TempDir(), "ls", "--json", "--offline").Output()
		var ls lsNode
		if jerr := json.Unmarshal(out, &ls); jerr != nil {
			t.Fatalf("npm ls: %v %v\n%s", err, jerr, out)
		}
		var got []string
		for name, d := range ls.Dependencies {
			got = append(got, name+"@"+d.Version)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("npm ls reads %v, the test wants %v", got, want)
		}
	}
	deps, offers := listThenActive(t, ws)
	if got := ids(deps); !slices.Equal(got, want) {
		t.Errorf("list_deps %v, want %v", got, want)
	}
	wantOffers := []string{"plug@1.0.0 " + filepath.Join(realPath(t, ws), "node_modules", "plug")}
	if got := offerIDs(offers); !slices.Equal(got, wantOffers) {
		t.Errorf("active_plugins %v, want %v", got, wantOffers)
	}
	// Asked for the version only "Version" says, nothing is offered.
	p, _ := newPM(t, ws, nil)
	if offers, err := p.ActivePlugins(context.Background(), []protocol.PackageID{npmID("plug", "9.9.9")}); err != nil || len(offers) != 0 {
		t.Errorf("active_plugins for plug 9.9.9: %v %v", offerIDs(offers), err)
	}
}
