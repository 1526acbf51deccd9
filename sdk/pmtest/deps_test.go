package pmtest

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoSchemaLibraryLinked keeps general JSON Schema libraries out of what
// pmtest links into binaries (symposium-pm among them) and out of pmtest's
// own test binary: a library's package init runs at every start of a binary
// that links it, on the hook path and at each of the thousand or so times
// the test binary re-executes itself as a PM (procmode, rawPM).
// santhosh-tekuri/jsonschema's costs about 13 ms of CPU. The validator's
// oracle test, which needs it, is in internal/jsonschema, a test binary of
// its own.
func TestNoSchemaLibraryLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	const ours = "github.com/symposium-dev/symposium-pm/"
	for _, tt := range []struct {
		what string
		args []string
	}{
		{"pmtest", []string{"list", "-deps", "."}},
		{"pmtest's test binary", []string{"list", "-deps", "-test", "."}},
	} {
		out, err := exec.CommandContext(t.Context(), goTool, tt.args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(tt.args, " "), err, out)
		}
		for line := range strings.Lines(string(out)) {
			// A package built for the test reads "path [pmtest.test]".
			dep, _, _ := strings.Cut(strings.TrimSpace(line), " ")
			if strings.Contains(dep, "jsonschema") && !strings.HasPrefix(dep, ours) {
				t.Errorf("%s links %s", tt.what, dep)
			}
		}
	}
}
