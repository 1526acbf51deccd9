package pypipm

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoYAMLLinked keeps a YAML parser out of symposium-pm-pypi, which
// reads no YAML: a parser linked in is initialized at every start, on every
// hook (about 1.5 ms of CPU and 48 page faults on the benchmark machine).
// The PM asks whether a distribution embeds skills through skilltree, not skill,
// which links one to parse SKILL.md front matter.
func TestNoYAMLLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	const bin = "github.com/symposium-dev/symposium-pm/pm-pypi/cmd/symposium-pm-pypi"
	out, err := exec.CommandContext(t.Context(), goTool, "list", "-deps", bin).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps %s: %v\n%s", bin, err, out)
	}
	for line := range strings.Lines(string(out)) {
		if dep := strings.TrimSpace(line); strings.Contains(dep, "yaml") {
			t.Errorf("%s links %s", bin, dep)
		}
	}
}
