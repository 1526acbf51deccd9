package testscript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
	"github.com/symposium-dev/symposium-pm/sdk/host/discovery"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// guideGoProgram returns the first Go code block of the Markdown file at
// path: the complete PM a guide shows.
func guideGoProgram(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n```go\n")
	if !ok {
		t.Fatalf("%s has no Go code block", path)
	}
	code, _, ok := strings.Cut(rest, "\n```\n")
	if !ok {
		t.Fatalf("%s: the Go code block does not end", path)
	}
	return code + "\n"
}

// shelfMarker precedes the shell block of docs/writing-a-pm.md that makes
// the shelf the guide's PM serves.
var shelfMarker = regexp.MustCompile(`^<!-- shelf: `)

// byHandMarker and byHandOutputMarker precede the guide's commands trying
// the PM by hand and what they print.
var (
	byHandMarker       = regexp.MustCompile(`^<!-- by-hand: `)
	byHandOutputMarker = regexp.MustCompile(`^<!-- by-hand-output: `)
)

// TestWritingAPMGuide builds the PM that docs/writing-a-pm.md shows, as
// written there, makes the shelf the guide makes with its commands, and
// runs the conformance suite against the PM on it, as the guide says it
// passes; tried by hand, the PM prints what the guide shows.
func TestWritingAPMGuide(t *testing.T) {
	root := repoRoot(t)
	if root == "" {
		t.Skip("not in a checkout of the repository: the guide is absent")
	}
	if testing.Short() {
		t.Skip("builds a PM: skipped with -short")
	}
	guide := filepath.Join(root, "docs", "writing-a-pm.md")
	code := guideGoProgram(t, guide)
	tmp := t.TempDir()
	src := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(src, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	// The program is built as a package of this module that exists only in
	// an overlay, so it compiles against the workspace's SDK.
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{
		filepath.Join(here, "internal", "guidepm", "main.go"): src,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ovFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(ovFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "symposium-pm-shelf")
	// -trimpath, as make test builds: the SDK packages compiled for make
	// test are reused, on any checkout path.
	build := exec.Command("go", "build", "-trimpath", "-overlay", ovFile, "-o", bin, "./internal/guidepm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the PM of docs/writing-a-pm.md: %v\n%s", err, out)
	}

	// The shelf is the one the guide makes, by its own commands.
	shelfCmds := markedBlocks(t, guide, shelfMarker)
	if len(shelfCmds) != 1 {
		t.Fatalf("%s: %d blocks marked %q, want 1", guide, len(shelfCmds), shelfMarker)
	}
	sh := exec.Command("sh", "-e", "-c", shelfCmds[0].body)
	sh.Dir = tmp
	if out, err := sh.CombinedOutput(); err != nil {
		t.Fatalf("%s:%d: making the shelf: %v\n%s", guide, shelfCmds[0].line, err, out)
	}
	shelf := filepath.Join(tmp, "shelf")
	if _, err := os.Stat(filepath.Join(shelf, "hello", "SYMPOSIUM.toml")); err != nil {
		t.Fatalf("%s:%d: the shelf has no plugin hello: %v", guide, shelfCmds[0].line, err)
	}
	// Tried by hand as the guide does, the PM prints what the guide shows.
	byHand := markedBlocks(t, guide, byHandMarker)
	shown := markedBlocks(t, guide, byHandOutputMarker)
	if len(byHand) != 1 || len(shown) != 1 {
		t.Fatalf("%s: %d blocks marked %q and %d marked %q, want 1 each", guide, len(byHand), byHandMarker, len(shown), byHandOutputMarker)
	}
	sh = exec.Command("sh", "-e", "-c", byHand[0].body)
	sh.Dir = tmp
	sh.Env = append(os.Environ(), "PWD="+tmp)
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("%s:%d: trying the PM by hand: %v", guide, byHand[0].line, err)
	}
	if got := strings.ReplaceAll(string(out), tmp, "/home/me/shelf"); got != shown[0].body {
		t.Errorf("%s:%d: the PM tried by hand prints\n%s\nwhere the guide shows\n%s", guide, shown[0].line, got, shown[0].body)
	}

	// Registered as a registry (kind = "registry"), the guide's plugin is
	// enabled with its one skill: its manifest names the skills/ group (a
	// registry's manifest gets none by default), and depends-on = "*" keeps
	// it from waiting for [plugins] use.
	res := guideDiscover(t, bin, shelf)
	if len(res.Warnings) != 0 {
		t.Errorf("discovery over the guide's shelf warned: %v", res.Warnings)
	}
	if len(res.Plugins) != 1 || res.Plugins[0].Name != "hello" || res.Plugins[0].State != discovery.Enabled || res.Plugins[0].Skills != 1 {
		t.Errorf("%s:%d: discovery over the guide's shelf gave %+v; want hello enabled with 1 skill", guide, shelfCmds[0].line, res.Plugins)
	}
	// An entry whose manifest cannot be read is left out, and named in a
	// warning (protocol §5.2); a file beside the plugins is no entry.
	bad := filepath.Join(tmp, "bad-shelf")
	broken := filepath.Join(bad, "broken", "SYMPOSIUM.toml")
	if err := os.MkdirAll(filepath.Dir(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("name = \"broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "README"), []byte("a shelf\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res = guideDiscover(t, bin, bad)
	if len(res.Plugins) != 0 || len(res.Warnings) != 1 || res.Warnings[0].File != broken || !strings.Contains(res.Warnings[0].Message, `"broken"`) {
		t.Errorf("discovery over a shelf whose one plugin does not parse gave plugins %+v, warnings %+v; want none, and one warning naming %s", res.Plugins, res.Warnings, broken)
	}

	pmtest.Run(t, []string{bin}, pmtest.WithProcessEnv("SHELF_DIR="+shelf))
}

// guideDiscover runs discovery, as symposium-pm discover does, with the
// guide's PM bin serving shelf as the one PM, configured with kind =
// "registry" as the guide registers it, in an empty workspace.
func guideDiscover(t *testing.T, bin, shelf string) discovery.Result {
	t.Helper()
	ws := t.TempDir()
	pms := host.NewRegistry(host.Options{Workspace: ws, CacheDir: t.TempDir()},
		host.Spec{Name: "shelf", Command: bin, Env: []string{"SHELF_DIR=" + shelf}})
	defer pms.Close()
	return discovery.Discover(t.Context(), discovery.Options{
		Workspace: ws,
		Config:    &config.Config{},
		PMs:       pms,
		Kinds:     map[string]discovery.Source{"shelf": discovery.SourceRegistry},
	})
}
