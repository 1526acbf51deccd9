package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestDiscoverPrintsNoControlCharacters: a PM chooses its package names,
// versions and roots, and discover prints them (and reasons built from
// them): without the control characters a terminal would interpret, so a
// hostile PM cannot write escape sequences to the user's terminal.
func TestDiscoverPrintsNoControlCharacters(t *testing.T) {
	evil := "x\x1b]0;pwned\x07\x1b[2J"
	of := offerIn(t, "eco", evil, `{"name":"p"}`, map[string]string{"SYMPOSIUM.toml": "name = \"p\"\n"})
	of.ID.Version = "1.0.0\x1b[31m"
	of.Manifest = json.RawMessage(`{"name":"p"}`)
	eco := pmEntry(t, "eco", "", scriptPM(t, "eco", nil, map[string]any{
		protocol.MethodActivePlugins: []protocol.Offer{of},
	}))
	_, common := cliEnv(t, eco)
	code, out, errOut := runMain(t, append([]string{"discover"}, common...)...)
	t.Logf("exit %d\nstdout %q\nstderr %q", code, out, errOut)
	if strings.ContainsAny(out, "\x1b\x07") {
		t.Errorf("discover printed control characters a PM chose to the terminal")
	}
}

// TestRefreshAndInitializeDiagnosticsShown: what a registry PM says while
// refreshing (discover --refresh), and while answering initialize, is
// shown among discover's warnings.
func TestRefreshAndInitializeDiagnosticsShown(t *testing.T) {
	dir := scriptPM(t, "reg", []string{protocol.CapRefresh}, map[string]any{
		protocol.MethodActivePlugins:           []protocol.Offer{},
		protocol.MethodRefresh:                 map[string]any{"refreshed": true},
		protocol.MethodRefresh + ".diag":       []map[string]any{{"message": "REFRESH-PROBLEM: the mirror refused us; serving a week-old clone"}},
		protocol.MethodInitialize + ".diag":    []map[string]any{{"message": "INIT-PROBLEM: ~/.reg/config is broken; its settings are ignored"}},
		protocol.MethodActivePlugins + ".diag": []map[string]any{{"message": "ACTIVE-PROBLEM: control"}},
	})
	_, common := cliEnv(t, pmEntry(t, "reg", "registry", dir))
	code, out, errOut := runMain(t, append([]string{"discover", "--refresh"}, common...)...)
	t.Logf("exit %d\n%s%s", code, out, errOut)
	if !strings.Contains(out, "ACTIVE-PROBLEM") {
		t.Fatal("control diagnostic missing")
	}
	for _, want := range []string{"REFRESH-PROBLEM", "INIT-PROBLEM"} {
		if !strings.Contains(out, want) {
			t.Errorf("discover --refresh: the PM's diagnostic %s is not shown", want)
		}
	}
}
