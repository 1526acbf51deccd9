package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/internal/npmreg"
)

const nodePMDir = "../../../examples/pm-node"

// nodeRegistry is the Node PM's sample plugin directory, absolute.
func nodeRegistry(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join(nodePMDir, "testdata", "registry"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func needNode(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	if _, err := os.Stat(filepath.Join(nodePMDir, "package.json")); err != nil {
		t.Skip("examples/pm-node is not beside this module")
	}
}

// isolate points the configuration, npm and go at the test's own
// directories, and returns the SYMPOSIUM_HOME to write config.toml into.
func isolate(t *testing.T, npmrc string) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("SYMPOSIUM_HOME", filepath.Join(home, ".symposium"))
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("npm_config_cache", filepath.Join(home, "npm-cache"))
	t.Setenv("npm_config_registry", "")
	os.Unsetenv("npm_config_registry") // the user .npmrc decides
	t.Setenv("GOPROXY", "off")
	if err := os.MkdirAll(filepath.Join(home, ".symposium"), 0o755); err != nil {
		t.Fatal(err)
	}
	if npmrc != "" {
		if err := os.WriteFile(filepath.Join(home, ".npmrc"), []byte(npmrc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(home, ".symposium")
}

func writeConfig(t *testing.T, symHome, body string) {
	t.Helper()
	cfg := "[defaults]\nsymposium-recommendations = false\nuser-plugins = false\n\n" + body
	if err := os.WriteFile(filepath.Join(symHome, "config.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The Node PM, published with npm pack to a loopback registry, acquired by
// symposium-pm sync with the real npm install; a second PM whose source
// cannot be acquired does not stop it, in sync, status or discover.
func TestSyncStatusDiscoverNodePM(t *testing.T) {
	needNode(t)
	tgz, err := npmreg.Pack(nodePMDir)
	if err != nil {
		t.Fatal(err)
	}
	reg := npmreg.New()
	defer reg.Close()
	if err := reg.Publish(tgz); err != nil {
		t.Fatal(err)
	}
	symHome := isolate(t, "registry="+reg.URL()+"\n")
	writeConfig(t, symHome, `[[package-manager]]
name = "node"
source = "npm"
package = "symposium-pm-node"
version = "0.1.0"
args = ["--dir", "`+nodeRegistry(t)+`"]

[[package-manager]]
name = "broken"
source = "go"
module = "example.invalid/nope/cmd/nope"
version = "v1.0.0"

[plugins]
use = ["hello", "bare"]
`)
	ws := t.TempDir()
	cache := filepath.Join(t.TempDir(), "cache")
	common := []string{"--workspace", ws, "--cache-dir", cache}

	// Before sync: the hook path never acquires; both PMs are absent, with
	// a warning naming symposium-pm sync.
	code, out, errOut := runCmd(t, cmdDiscover, append(common, "--json")...)
	if code != ExitOK {
		t.Fatalf("discover before sync: exit %d: %s", code, errOut)
	}
	for _, want := range []string{`package manager \"node\" from npm symposium-pm-node@0.1.0 is not available (not acquired yet); run ` + "`symposium-pm sync`", `package manager \"broken\" from go example.invalid/nope/cmd/nope@v1.0.0`} {
		if !strings.Contains(out, want) {
			t.Errorf("discover before sync: no warning %s in\n%s", want, out)
		}
	}

	// sync acquires node; broken fails with the cause, and the exit code says so.
	code, out, errOut = runCmd(t, cmdSync, common...)
	t.Logf("symposium-pm sync:\n%s", out)
	if code != ExitFailure {
		t.Errorf("sync: exit %d, want 1 (one PM failed)\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "node: acquired 0.1.0 from npm symposium-pm-node@0.1.0: "+filepath.Join(cache, "pm-binaries", "node", "0.1.0")) {
		t.Errorf("sync output:\n%s", out)
	}
	if !strings.Contains(out, `broken: FAILED: acquiring package manager "broken" from go example.invalid/nope/cmd/nope@v1.0.0: go install failed`) ||
		!strings.Contains(out, "GOPROXY=off") {
		t.Errorf("sync does not report broken's failure with its cause:\n%s", out)
	}

	// Again, for node only: pinned and present, nothing to do.
	code, out, _ = runCmd(t, cmdSync, append(common, "--json", "node")...)
	var doc syncDoc
	err = json.Unmarshal([]byte(out), &doc)
	results := doc.Results
	if err != nil || code != ExitOK || doc.Version != JSONVersion || len(results) != 1 || results[0].Status != "unchanged" {
		t.Errorf("second sync of node: exit %d, %v: %s", code, err, out)
	}

	// status: node answers initialize, from the acquired copy.
	code, out, _ = runCmd(t, cmdStatus, append(common, "--json")...)
	if code != ExitFailure {
		t.Errorf("status: exit %d, want 1 (broken does not answer)", code)
	}
	var sdoc statusDoc
	if err := json.Unmarshal([]byte(out), &sdoc); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	rows := sdoc.PackageManagers
	byName := map[string]pmStatus{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	node, broken := byName["node"], byName["broken"]
	if !node.Answers || node.Acquired != "0.1.0" || node.PMName != "node" || node.PMVersion != "0.1.0" ||
		strings.Join(node.Capabilities, ",") != "search" || node.Origin != "npm symposium-pm-node@0.1.0" {
		t.Errorf("status of node: %+v", node)
	}
	if broken.Answers || !strings.Contains(broken.Error, "not acquired yet: the last `symposium-pm sync` (") || !strings.Contains(broken.Error, "GOPROXY=off; fix the cause, then run sync again") {
		t.Errorf("status of broken: %+v", broken)
	}
	code, out, _ = runCmd(t, cmdStatus, common...)
	t.Logf("symposium-pm status:\n%s", out)
	if !strings.Contains(out, "node ") || !strings.Contains(out, "yes") || !strings.Contains(out, "Problems:") {
		t.Errorf("status table (exit %d):\n%s", code, out)
	}

	// discover: the Node PM's plugins, though broken is still absent.
	code, out, errOut = runCmd(t, cmdDiscover, common...)
	t.Logf("symposium-pm discover:\n%s", out)
	if code != ExitOK {
		t.Fatalf("discover: exit %d: %s", code, errOut)
	}
	for _, want := range []string{"node  hello  1.1.0", "node  bare   0.3.0", `package manager "broken" from go`} {
		if !strings.Contains(regexpSpaces(out), regexpSpaces(want)) {
			t.Errorf("discover output lacks %q:\n%s", want, out)
		}
	}
}

// regexpSpaces squeezes runs of spaces, for comparing table lines.
func regexpSpaces(s string) string { return strings.Join(strings.Fields(s), " ") }

func TestCheckNodePM(t *testing.T) {
	needNode(t)
	// A generous timeout: node starting on a loaded machine can take more
	// than the default 10s to answer initialize; the check is of answers.
	code, out, errOut := runCmd(t, cmdCheck, "--timeout", "2m", "--", "node", filepath.Join(nodePMDir, "bin", "symposium-pm-node.js"), "--dir", nodeRegistry(t))
	if code != ExitOK || !strings.Contains(out, " 0 failed") {
		t.Errorf("check of the Node PM: exit %d\n%s%s", code, out, errOut)
	}
}

func TestSyncUsageAndNothingToDo(t *testing.T) {
	symHome := isolate(t, "")
	writeConfig(t, symHome, "[[package-manager]]\nname = \"plain\"\ncommand = \"true\"\n")
	ws := t.TempDir()
	common := []string{"--workspace", ws, "--cache-dir", t.TempDir()}
	if code, out, _ := runCmd(t, cmdSync, common...); code != ExitOK || !strings.Contains(out, "No package manager with an installation source") {
		t.Errorf("nothing to sync: exit %d: %s", code, out)
	}
	if code, _, errOut := runCmd(t, cmdSync, append(common, "nope")...); code != ExitFailure || !strings.Contains(errOut, `no [[package-manager]] named "nope"`) {
		t.Errorf("unknown name: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCmd(t, cmdSync, append(common, "plain")...); code != ExitFailure || !strings.Contains(errOut, "no installation source") {
		t.Errorf("a command PM named: exit %d: %s", code, errOut)
	}
}

// An invalid source is reported by sync, status and discover alike, with
// the file and line.
func TestInvalidSource(t *testing.T) {
	symHome := isolate(t, "")
	writeConfig(t, symHome, "[[package-manager]]\nname = \"odd\"\nsource = \"pip\"\npackage = \"x\"\n")
	common := []string{"--workspace", t.TempDir(), "--cache-dir", t.TempDir()}
	want := `config.toml:5: package manager "odd": unknown installation source "pip"`
	for _, c := range []struct {
		name string
		cmd  cmdFunc
		args []string
	}{
		{"sync", cmdSync, common},
		{"status", cmdStatus, append(common, "--no-start")},
		{"discover", cmdDiscover, common},
	} {
		_, out, _ := runCmd(t, c.cmd, c.args...)
		if !strings.Contains(out, want) {
			t.Errorf("%s does not report %q:\n%s", c.name, want, out)
		}
	}
}

// Interrupting sync kills the toolchain and leaves nothing behind.
func TestSyncInterrupted(t *testing.T) {
	symHome := isolate(t, "")
	writeConfig(t, symHome, "[[package-manager]]\nname = \"slow\"\nsource = \"go\"\nmodule = \"example.com/slow\"\nversion = \"v1.0.0\"\n")
	fake := filepath.Join(t.TempDir(), "go")
	started := filepath.Join(t.TempDir(), "started")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\n: > \""+started+"\"\nmkdir -p \"$GOBIN\"\n: > \"$GOBIN/half\"\nsleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SYMPOSIUM_GO", fake)
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for range 500 {
			if _, err := os.Stat(started); err == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	var stdout, stderr strings.Builder
	code := cmdSync(ctx, []string{"--workspace", t.TempDir(), "--cache-dir", cache}, &stdout, &stderr)
	if code != ExitFailure || !strings.Contains(stdout.String(), "slow: FAILED") || !strings.Contains(stdout.String(), "interrupted") {
		t.Errorf("exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	entries, _ := os.ReadDir(filepath.Join(cache, "pm-binaries", "slow"))
	if len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
