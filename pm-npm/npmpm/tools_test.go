package npmpm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

// installTools installs the package managers named by alias → spec (such
// as "pnpm9" → "pnpm@9") from the npm registry into one temporary prefix and
// returns alias → the JavaScript file of its "pnpm" or "yarn" bin, or skips
// the test.
func installTools(t *testing.T, tools map[string]string) map[string]string {
	t.Helper()
	needNPM(t)
	bins, err := installToolsIn(t.TempDir(), tools)
	var ie *installError
	if errors.As(err, &ie) {
		t.Skip(ie.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

// makeTestTools are the installers that tests outside the oracle ones (which
// make test runs) drive: pnpm 9, yarn 1, and yarn 4 (@yarnpkg/cli-dist).
var makeTestTools = map[string]string{"pnpm9": "pnpm@9", "yarn1": "yarn@1", "berry4": "@yarnpkg/cli-dist@4"}

// sharedTools holds makeTestTools once installed, for every test of this
// test binary to run read-only: one download and install from the npm
// registry instead of one per test. TestMain removes dir at the end.
var sharedTools struct {
	once sync.Once
	dir  string
	bins map[string]string
	err  error
}

// installSharedTools returns makeTestTools' bins (as installTools does),
// installing them on the first call of the test binary, or skips the test
// when they cannot be installed.
func installSharedTools(t *testing.T) map[string]string {
	t.Helper()
	needNPM(t)
	sharedTools.once.Do(func() {
		dir, err := os.MkdirTemp("", "npmpm-tools-")
		if err != nil {
			sharedTools.err = fmt.Errorf("a directory for the shared installers: %w", err)
			return
		}
		sharedTools.dir = dir
		sharedTools.bins, sharedTools.err = installToolsIn(dir, makeTestTools)
	})
	var ie *installError
	if errors.As(sharedTools.err, &ie) {
		t.Skip(ie.Error())
	}
	if sharedTools.err != nil {
		t.Fatal(sharedTools.err)
	}
	return sharedTools.bins
}

// removeSharedTools runs the tests and then removes the installers
// installSharedTools installed.
type removeSharedTools struct{ m *testing.M }

// Run runs the tests, then removes sharedTools.dir.
func (r removeSharedTools) Run() int {
	code := r.m.Run()
	if sharedTools.dir != "" {
		if err := os.RemoveAll(sharedTools.dir); err != nil {
			fmt.Fprintf(os.Stderr, "removing the shared installers: %v\n", err)
		}
	}
	return code
}

// installError is an installation from the npm registry that failed, which
// skips the tests that needed it.
type installError struct {
	tools map[string]string
	err   error
	out   []byte
}

func (e *installError) Error() string {
	return fmt.Sprintf("cannot install %v from the npm registry (%v): %.500s", e.tools, e.err, e.out)
}

func (e *installError) Unwrap() error { return e.err }

// installToolsIn installs tools (alias → spec) into the prefix dir and
// returns alias → the JavaScript file of its "pnpm" or "yarn" bin; an
// *installError when npm cannot install them.
func installToolsIn(dir string, tools map[string]string) (map[string]string, error) {
	args := []string{"install", "--no-audit", "--no-fund", "--ignore-scripts", "--prefix", dir}
	for alias, spec := range tools {
		args = append(args, alias+"@npm:"+spec)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(dir, ".cache"), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, &installError{tools: tools, err: err, out: out}
	}
	out := map[string]string{}
	for alias, spec := range tools {
		pkgDir := filepath.Join(dir, "node_modules", alias)
		pj := filepath.Join(pkgDir, "package.json")
		data, err := os.ReadFile(pj)
		if err != nil {
			return nil, err
		}
		var m struct {
			Bin json.RawMessage `json:"bin"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("%s: %w", pj, err)
		}
		var bins map[string]string
		if json.Unmarshal(m.Bin, &bins) != nil {
			return nil, fmt.Errorf("%s: unexpected bin field %s", spec, m.Bin)
		}
		bin, ok := bins["pnpm"]
		if !ok {
			bin, ok = bins["yarn"]
		}
		if !ok {
			return nil, fmt.Errorf("%s: no pnpm or yarn bin in %s", spec, m.Bin)
		}
		out[alias] = filepath.Join(pkgDir, bin)
	}
	return out, nil
}

// runTool runs a package manager binary in dir against reg, isolated like
// runNPM.
func runTool(t *testing.T, reg *fakeregistry.Registry, dir, bin string, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	scratch := t.TempDir()
	cmd := fakeregistry.NPMCommand(ctx, reg.URL(), dir, scratch, append([]string{bin}, args...)...)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	cmd.Path, cmd.Args[0] = node, node
	cmd.Env = append(cmd.Env, "npm_config_store_dir="+filepath.Join(scratch, "store"),
		"YARN_CACHE_FOLDER="+filepath.Join(scratch, "yarn-cache"), "CI=true", "COREPACK_ENABLE_STRICT=0")
	for _, kv := range env {
		cmd.Env = append(cmd.Env, strings.ReplaceAll(kv, "$REGISTRY", reg.URL()))
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(bin), args, err, out)
	}
}

// TestOracleListDepsPnpmYarnAgainstNPMLs locks the same projects with real pnpm
// 9 (lockfile 9.0), yarn 1 and yarn 4 (berry) — plus pnpm 8 and 7 (lockfile 6.0 and 5.4)
// with SYMPOSIUM_NPM_ALL_TOOLS=1 — and checks that
// list_deps from each lockfile alone equals npm ls on npm's own lockfile.
func TestOracleListDepsPnpmYarnAgainstNPMLs(t *testing.T) {
	reg := oracleRegistry(t, "installs pnpm and yarn and locks every project with each")
	projects := map[string]map[string]string{
		"app": {"package.json": `{"name":"app","version":"1.0.0",
		  "dependencies":{"right":"^2.0.0","lefty":"npm:left@~1.1.0","@acme/widget":"~0.3.0","tagged":"next"},
		  "devDependencies":{"left":"^1"},"optionalDependencies":{"opt":"*"}}`},
		"workspace": {
			"package.json":            `{"name":"mono","version":"0.0.0","private":true,"workspaces":["packages/*"],"dependencies":{"right":"3.0.0"}}`,
			"pnpm-workspace.yaml":     "packages:\n  - 'packages/*'\n",
			"packages/a/package.json": `{"name":"a","version":"0.1.0","dependencies":{"left":"1.0.0","@acme/widget":"0.4.0"}}`,
			"packages/b/package.json": `{"name":"b","version":"0.2.0","dependencies":{"right":"^2"},"devDependencies":{"lefty":"npm:left@^2.0.0"}}`,
		},
	}
	type tool struct {
		alias, spec, lock string
		args              []string
		header            string   // what the lockfile must say about its format
		env               []string // extra environment ($REGISTRY is replaced)
	}
	pnpmArgs := []string{"install", "--lockfile-only"}
	yarnArgs := []string{"install", "--ignore-scripts", "--non-interactive", "--no-progress"}
	berryEnv := []string{"YARN_NPM_REGISTRY_SERVER=$REGISTRY", "YARN_UNSAFE_HTTP_WHITELIST=127.0.0.1",
		"YARN_ENABLE_IMMUTABLE_INSTALLS=false", "YARN_ENABLE_TELEMETRY=0", "YARN_ENABLE_GLOBAL_CACHE=false"}
	tools := []tool{
		{"pnpm9", "pnpm@9", "pnpm-lock.yaml", pnpmArgs, "lockfileVersion: '9.0'", nil},
		{"yarn1", "yarn@1", "yarn.lock", yarnArgs, "# yarn lockfile v1", nil},
		{"berry4", "@yarnpkg/cli-dist@4", "yarn.lock", []string{"install", "--mode=update-lockfile"}, "__metadata:", berryEnv},
	}
	if os.Getenv("SYMPOSIUM_NPM_ALL_TOOLS") != "" {
		// Older pnpm writes the 6.0 and 5.4 formats; slow, so opt-in.
		tools = append(tools, tool{"pnpm8", "pnpm@8", "pnpm-lock.yaml", pnpmArgs, "lockfileVersion: '6.0'", nil}, tool{"pnpm7", "pnpm@7", "pnpm-lock.yaml", pnpmArgs, "lockfileVersion: 5.4", nil})
	}
	specs := map[string]string{}
	for _, tl := range tools {
		specs[tl.alias] = tl.spec
	}
	bins := installTools(t, specs)
	for pname, files := range projects {
		ref := t.TempDir()
		writeFiles(t, ref, files)
		runNPM(t, reg, ref, "install", "--package-lock-only")
		want := oracleDeps(t, reg, ref)
		for _, tool := range tools {
			t.Run(pname+"/"+tool.spec, func(t *testing.T) {
				t.Parallel()
				bin := bins[tool.alias]
				dir := t.TempDir()
				writeFiles(t, dir, files)
				if tool.alias == "berry4" {
					writeFiles(t, dir, map[string]string{"yarn.lock": ""}) // marks the project root
				}
				runTool(t, reg, dir, bin, tool.env, tool.args...)
				os.RemoveAll(filepath.Join(dir, "node_modules")) // the lockfile alone must answer
				lock, err := os.ReadFile(filepath.Join(dir, tool.lock))
				if err != nil {
					t.Fatalf("%s wrote no %s", tool.spec, tool.lock)
				}
				if !strings.Contains(string(lock), tool.header) {
					t.Fatalf("%s: %s lacks %q", tool.spec, tool.lock, tool.header)
				}
				p, _ := newPM(t, dir, nil)
				got, err := p.ListDeps(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if g := ids(got); !slices.Equal(g, want) {
					t.Errorf("list_deps from %s:\n got  %v\n want %v (npm ls)\n%.3000s", tool.lock, g, want, lock)
				}
			})
		}
	}
}
