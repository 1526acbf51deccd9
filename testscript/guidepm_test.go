package testscript

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

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

// TestWritingAPMGuide builds the PM that docs/writing-a-pm.md shows, as
// written there, and runs the conformance suite against it, as the guide
// says it passes.
func TestWritingAPMGuide(t *testing.T) {
	root := repoRoot(t)
	if root == "" {
		t.Skip("not in a checkout of the repository: the guide is absent")
	}
	if testing.Short() {
		t.Skip("builds a PM: skipped with -short")
	}
	code := guideGoProgram(t, filepath.Join(root, "docs", "writing-a-pm.md"))
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

	shelf := filepath.Join(tmp, "shelf")
	files := map[string]string{
		"hello/SYMPOSIUM.toml":      "name = \"hello\"\ndepends-on = \"*\"\n",
		"hello/skills/hi/SKILL.md":  "---\nname: hi\ndescription: Say hello.\n---\nHello.\n",
		"tidy/SYMPOSIUM.toml":       "name = \"tidy\"\n",
		"tidy/skills/tidy/SKILL.md": "---\nname: tidy\ndescription: Keep it tidy.\n---\nTidy.\n",
	}
	for name, content := range files {
		p := filepath.Join(shelf, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pmtest.Run(t, []string{bin}, pmtest.WithProcessEnv("SHELF_DIR="+shelf))
}
