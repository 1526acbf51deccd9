package testscript

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoYAMLLinked keeps a YAML parser out of the PMs that read no YAML,
// and out of skilltree, through which every PM asks whether a package
// embeds skills: a parser linked in is initialized at every start, on
// every hook (about 1.5 ms of CPU and 48 page faults on the benchmark
// machine). npm (pnpm and yarn lockfiles) and the git registry (SKILL.md
// front matter) read YAML and are not listed.
func TestNoYAMLLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	const ours = "github.com/symposium-dev/symposium-pm/"
	for _, pkg := range []string{
		ours + "sdk/manifest/skilltree",
		ours + "pm-cargo/cmd/symposium-pm-cargo",
		ours + "pm-pypi/cmd/symposium-pm-pypi",
	} {
		out, err := exec.CommandContext(t.Context(), goTool, "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for line := range strings.Lines(string(out)) {
			if dep := strings.TrimSpace(line); strings.Contains(dep, "yaml") {
				t.Errorf("%s links %s", pkg, dep)
			}
		}
	}
}
