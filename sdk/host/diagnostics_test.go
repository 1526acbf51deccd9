//go:build unix

package host_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func startDiagPM(t *testing.T, mode string) *host.Conn {
	t.Helper()
	script, err := filepath.Abs("testdata/diagnostic-pm")
	if err != nil {
		t.Fatal(err)
	}
	c, err := host.Start(t.Context(), host.Spec{Name: "diag", Command: script, Env: []string{"DIAG_MODE=" + mode}},
		host.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The diagnostics a PM sends before its answer come back with the result,
// in order, sanitized and bounded, with the count of those dropped.
func TestCallDiagnosticsCollectsAndBounds(t *testing.T) {
	c := startDiagPM(t, "many")
	for round := range 2 { // the second call gets its own, not the first's
		var deps []protocol.PackageID
		diags, err := c.CallDiagnostics(t.Context(), protocol.MethodListDeps, struct{}{}, &deps)
		if err != nil {
			t.Fatal(err)
		}
		if len(diags) != protocol.MaxDiagnostics+1 {
			t.Fatalf("round %d: got %d diagnostics, want %d kept and one counting the dropped", round, len(diags), protocol.MaxDiagnostics)
		}
		first := diags[0]
		if first.Message != "first [31mred" || first.File != "/w/a.lock" || first.Line != 3 ||
			first.Package == nil || first.Package.Name != "x" || first.Level != protocol.LevelWarning {
			t.Errorf("first diagnostic: %+v", first)
		}
		if diags[1].Message != "number 1" || diags[1].Level != protocol.LevelInfo {
			t.Errorf("second diagnostic: %+v", diags[1])
		}
		if last := diags[len(diags)-1].Message; !strings.Contains(last, "5 more diagnostics for this request, dropped") {
			t.Errorf("last diagnostic: %q", last)
		}
	}
	// A call that does not ask for them does not leave them behind.
	var deps []protocol.PackageID
	if err := c.Call(t.Context(), protocol.MethodListDeps, struct{}{}, &deps); err != nil {
		t.Fatal(err)
	}
}

// Hostile diagnostics are dropped and reported; the connection goes on.
func TestCallDiagnosticsReportsGarbage(t *testing.T) {
	c := startDiagPM(t, "garbage")
	var deps []protocol.PackageID
	diags, err := c.CallDiagnostics(t.Context(), protocol.MethodListDeps, struct{}{}, &deps)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.Message)
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		"not valid (message is not a string)",
		"for request 999, which is not a request in flight; dropped: for nobody",
		"not valid (its params are not an object)",
		"over the limit of 16384; dropped",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no report with %q in:\n%s", want, all)
		}
	}
	if strings.Contains(all, "progress") {
		t.Errorf("a notification the host does not know was reported:\n%s", all)
	}
	// The unknown level is a warning, not a problem.
	found := false
	for _, d := range diags {
		if d.Message == "m" && d.Level == protocol.LevelWarning {
			found = true
		}
	}
	if !found {
		t.Errorf("the diagnostic with an unknown level is not kept as a warning:\n%s", all)
	}
	if len(diags) != 5 {
		t.Errorf("got %d diagnostics, want 5:\n%s", len(diags), all)
	}
	if c.Unusable() {
		t.Error("the connection broke over hostile diagnostics")
	}
	if err := c.Call(t.Context(), protocol.MethodListDeps, struct{}{}, &deps); err != nil {
		t.Fatalf("a later call failed: %v", err)
	}
	_ = host.MaxDiagnosticBytes
}
