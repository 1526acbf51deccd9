//go:build unix

package host_test

import (
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestIndentedDiagnosticKept: a diagnostic line that starts with a space
// (valid JSON; the reader trims only a final carriage return) is a
// notification like any other: it reaches the call it belongs to, rather
// than going to jrpc2, which would drop it without a word.
func TestIndentedDiagnosticKept(t *testing.T) {
	script := shellPM(t, `	initialize) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocol_version":1,"name":"diag","capabilities":["list_deps"]}}\n' "$id" ;;
	list_deps)
		printf ' {"jsonrpc":"2.0","method":"diagnostic","params":{"request":%s,"message":"LOCKFILE-SKIPPED"}}\n' "$id"
		printf '{"jsonrpc":"2.0","id":%s,"result":[]}\n' "$id" ;;
`)
	c, err := host.Start(t.Context(), host.Spec{Name: "diag", Command: script}, host.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var deps []protocol.PackageID
	diags, err := c.CallDiagnostics(t.Context(), protocol.MethodListDeps, struct{}{}, &deps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diagnostics: %+v", diags)
	for _, d := range diags {
		if strings.Contains(d.Message, "LOCKFILE-SKIPPED") || strings.Contains(d.Message, "diagnostic") {
			return
		}
	}
	t.Error("a diagnostic line with a leading space vanished: neither kept nor reported")
}
