package npmpm

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// installLibs installs the lockfile parsers the package managers use
// themselves into a temporary prefix and returns its node_modules, or
// skips the test (offline, or the registry unreachable).
func installLibs(t *testing.T, specs ...string) string {
	t.Helper()
	needNPM(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", append([]string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", dir}, specs...)...)
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".cache"), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("cannot install %v from the npm registry (%v): %.500s", specs, err, out)
	}
	return filepath.Join(dir, "node_modules")
}

// lockParserDeps runs testdata/lockdeps.js: the direct dependencies as the
// package manager's own lockfile parser reads them.
// With member (a member's directory relative to dir), only that member's
// own dependencies.
func lockParserDeps(t *testing.T, nodePath, kind, dir string, member ...string) []string {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "lockdeps.js"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{script, kind, dir}, member...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+nodePath)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("lockdeps.js %s: %v\n%s", kind, err, stderr)
	}
	var deps []string
	if err := json.Unmarshal(out, &deps); err != nil {
		t.Fatalf("lockdeps.js output %q: %v", out, err)
	}
	slices.Sort(deps)
	return deps
}

// TestOracleListDepsAgainstLockfileParsers has real pnpm 9, yarn 1 and yarn 4
// (berry) lock generated projects against the fake registry, then reads
// each lockfile back with the tool's own parser (@yarnpkg/lockfile,
// @yarnpkg/parsers, js-yaml on pnpm's format) and compares the direct
// dependencies it records with list_deps. The projects cover workspaces,
// aliases, dev and optional dependencies, peers, a member's name also
// published to the registry, workspace: links, a pnpm catalog and tarball
// URLs, each where the tool supports it. SYMPOSIUM_NPM_ALL_TOOLS=1 adds
// pnpm 8 and 7 (lockfile formats 6.0 and 5.4). Each project is also opened
// from inside its members (a member's directory and one below it), where
// list_deps must give that member's own dependencies, read through the
// root's lockfile as each tool does.
func TestOracleListDepsAgainstLockfileParsers(t *testing.T) {
	reg := oracleRegistry(t, "installs pnpm and yarn from the npm registry and locks every project with each")
	// "b" is a member's name that the registry publishes too.
	reg.Publish(fakeregistry.Version{Name: "b", Version: "9.0.0"})
	nodePath := installLibs(t, "@yarnpkg/lockfile@1", "@yarnpkg/parsers@3", "js-yaml@4")
	url := reg.URL() + "left/-/left-1.1.0.tgz"
	common := map[string]string{
		"packages/a/package.json": `{"name":"a","version":"0.1.0",
		  "dependencies":{"left":"1.0.0","@acme/widget":"0.4.0"},
		  "peerDependencies":{"peer-thing":">=5"}}`,
		"packages/b/package.json": `{"name":"b","version":"0.2.0","dependencies":{"right":"^2"},
		  "devDependencies":{"lefty":"npm:left@^2.0.0"},"optionalDependencies":{"opt":"0.0.3"}}`,
	}
	with := func(extra map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range common {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	type tool struct {
		alias, spec, kind, lock string
		args, env               []string
		files                   map[string]string
	}
	berryEnv := []string{"YARN_NPM_REGISTRY_SERVER=$REGISTRY", "YARN_UNSAFE_HTTP_WHITELIST=127.0.0.1",
		"YARN_ENABLE_IMMUTABLE_INSTALLS=false", "YARN_ENABLE_TELEMETRY=0", "YARN_ENABLE_GLOBAL_CACHE=false"}
	pnpmFiles := with(map[string]string{
		"package.json": `{"name":"mono","version":"0.0.0","private":true,
		  "dependencies":{"right":"3.0.0","b":"^9","left-url":"` + url + `"},
		  "devDependencies":{"a":"workspace:*","lefty":"npm:left@~1.1.0"}}`,
		"pnpm-workspace.yaml": "packages:\n  - 'packages/*'\ncatalog:\n  tagged: 1.0.0\n",
		"packages/c/package.json": `{"name":"c","version":"0.3.0",
		  "dependencies":{"tagged":"catalog:","b":"workspace:^"}}`,
	})
	tools := []tool{
		{"pnpm9", "pnpm@9", "pnpm", "pnpm-lock.yaml", []string{"install", "--lockfile-only"}, nil, pnpmFiles},
		{"yarn1", "yarn@1", "yarn1", "yarn.lock", []string{"install", "--ignore-scripts", "--non-interactive", "--no-progress"}, nil,
			with(map[string]string{
				"package.json": `{"name":"mono","version":"0.0.0","private":true,"workspaces":["packages/*"],
				  "dependencies":{"right":"3.0.0","left-url":"` + url + `"},
				  "devDependencies":{"a":"^0.1.0","lefty":"npm:left@~1.1.0"}}`,
			})},
		{"berry4", "@yarnpkg/cli-dist@4", "berry", "yarn.lock", []string{"install", "--mode=update-lockfile"}, berryEnv,
			with(map[string]string{
				"package.json": `{"name":"mono","version":"0.0.0","private":true,"workspaces":["packages/*"],
				  "dependencies":{"right":"3.0.0","b":"npm:^9"},
				  "devDependencies":{"a":"workspace:*","lefty":"npm:left@~1.1.0"}}`,
				"yarn.lock": "", // marks the project root
			})},
	}
	if os.Getenv("SYMPOSIUM_NPM_ALL_TOOLS") != "" {
		tools = append(tools,
			tool{"pnpm8", "pnpm@8", "pnpm", "pnpm-lock.yaml", []string{"install", "--lockfile-only"}, nil, pnpmFiles},
			tool{"pnpm7", "pnpm@7", "pnpm", "pnpm-lock.yaml", []string{"install", "--lockfile-only"}, nil, pnpmFiles})
	}
	specs := map[string]string{}
	for _, tl := range tools {
		specs[tl.alias] = tl.spec
	}
	bins := installTools(t, specs)
	for _, tl := range tools {
		t.Run(tl.spec, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			files := tl.files
			if tl.alias == "pnpm7" || tl.alias == "pnpm8" {
				// Catalogs came with pnpm 9.5.
				files = with(map[string]string{"package.json": pnpmFiles["package.json"], "pnpm-workspace.yaml": "packages:\n  - 'packages/*'\n"})
			}
			writeFiles(t, dir, files)
			runTool(t, reg, dir, bins[tl.alias], tl.env, tl.args...)
			os.RemoveAll(filepath.Join(dir, "node_modules")) // the lockfile alone must answer
			want := lockParserDeps(t, nodePath, tl.kind, dir)
			if len(want) == 0 {
				t.Fatalf("the %s parser found no dependencies", tl.kind)
			}
			t.Logf("%s read by its own parser: %v", tl.lock, want)
			p, _ := newPM(t, dir, nil)
			got, err := p.ListDeps(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			g := ids(got)
			slices.Sort(g)
			if !slices.Equal(g, want) {
				lock, _ := os.ReadFile(filepath.Join(dir, tl.lock))
				t.Errorf("list_deps from %s:\n got  %v\n want %v (%s read by its own parser)\n%.4000s", tl.lock, g, want, tl.spec, lock)
			}
			for _, m := range []string{"packages/a", "packages/b"} {
				want := lockParserDeps(t, nodePath, tl.kind, dir, m)
				if len(want) == 0 {
					t.Fatalf("the %s parser found no dependencies for %s", tl.kind, m)
				}
				for _, from := range []string{m, m + "/src"} {
					start := filepath.Join(dir, filepath.FromSlash(from))
					if err := os.MkdirAll(start, 0o755); err != nil {
						t.Fatal(err)
					}
					p, _ := newPM(t, start, nil)
					got, err := p.ListDeps(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					g := ids(got)
					slices.Sort(g)
					if !slices.Equal(g, want) {
						t.Errorf("list_deps from %s with %s:\n got  %v\n want %v (%s read by its own parser)", from, tl.lock, g, want, tl.spec)
					}
				}
			}
		})
	}
}

// TestOracleListDepsWorkspacesLockV2AgainstNPMLs completes the npm lockfile
// versions for workspaces (the other oracle covers 1 and 3): a version 2
// lockfile written by npm, read by npm ls and by list_deps at the root.
func TestOracleListDepsWorkspacesLockV2AgainstNPMLs(t *testing.T) {
	reg := oracleRegistry(t, "runs npm install and npm ls on a workspace")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"package.json": `{"name":"mono","version":"0.0.0","private":true,"workspaces":["packages/*"],
		  "dependencies":{"right":"3.0.0","a":"^0.1.0"},"devDependencies":{"lefty":"npm:left@~1.1.0"}}`,
		"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0","@acme/widget":"0.4.0"},
		  "optionalDependencies":{"opt":"0.0.3"}}`,
		"packages/b/package.json": `{"name":"b","version":"0.2.0","dependencies":{"a":"*","right":"^2","tagged":"next"}}`,
	})
	runNPM(t, reg, dir, "install", "--package-lock-only", "--lockfile-version=2")
	var lock struct {
		LockfileVersion int `json:"lockfileVersion"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &lock); err != nil || lock.LockfileVersion != 2 {
		t.Fatalf("npm wrote lockfile version %d (%v), want 2", lock.LockfileVersion, err)
	}
	want := oracleDeps(t, reg, dir)
	p, _ := newPM(t, dir, nil)
	got, err := p.ListDeps(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if g := ids(got); !slices.Equal(g, want) {
		t.Errorf("list_deps:\n got  %v\n want %v (npm ls)", g, want)
	}
}
