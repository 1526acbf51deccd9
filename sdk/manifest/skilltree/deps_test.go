package skilltree

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoYAMLLinked keeps the YAML parser out of skilltree: PMs import it
// to ask whether a package embeds skills, and a parser linked in is
// initialized at every start of every PM (about 1.5 ms of CPU and 48 page
// faults each on the benchmark machine).
func TestNoYAMLLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.CommandContext(t.Context(), goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for line := range strings.Lines(string(out)) {
		if dep := strings.TrimSpace(line); strings.Contains(dep, "yaml") {
			t.Errorf("skilltree links %s", dep)
		}
	}
}
