//go:build unix

package host_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// shellPM writes a PM as a shell script answering each request by its
// method, cases being the arms of a "case $method in" over the request's
// id ($id) and method ($method), and returns its path.
func shellPM(t *testing.T, cases string) string {
	t.Helper()
	script := filepath.Join(t.TempDir(), "pm")
	body := `#!/bin/sh
while IFS= read -r line; do
	id=$(printf '%s\n' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\),"method":"\([a-z_]*\)".*/\1/p')
	method=$(printf '%s\n' "$line" | sed -n 's/^{"jsonrpc":"2.0","id":\([0-9][0-9]*\),"method":"\([a-z_]*\)".*/\2/p')
	[ -n "$id" ] || continue
	case $method in
` + cases + `	esac
done
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// oversizePM answers active_plugins with one line of about 2 MB (an offer
// whose manifest name is huge, as a package.json with a 100 MiB name made
// npm answer) and every other method as a healthy PM.
const oversizePM = `	initialize) printf '{"jsonrpc":"2.0","id":%s,"result":{"protocol_version":1,"name":"big","capabilities":["list_deps"]}}\n' "$id" ;;
	active_plugins)
		printf '{"jsonrpc":"2.0","id":%s,"result":[{"id":{"pm":"big","name":"a","version":"1.0.0"},"root":"/tmp","manifest":{"name":"' "$id"
		head -c 2000000 /dev/zero | tr '\0' n
		printf '"}}]}\n' ;;
	list_deps) printf '{"jsonrpc":"2.0","id":%s,"result":[{"pm":"big","name":"a","version":"1.0.0"}]}\n' "$id" ;;
	*) printf '{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"no %s here"}}\n' "$id" "$method" ;;
`

// TestOversizeAnswerFailsOnlyItsRequest is issue 14 item 6 seen from the
// host: an answer over the message bound fails the one request it answers,
// naming the sizes, and the connection keeps serving the others.
func TestOversizeAnswerFailsOnlyItsRequest(t *testing.T) {
	script := shellPM(t, oversizePM)
	ctx := t.Context()
	c, err := host.Start(ctx, host.Spec{Name: "big", Command: script}, host.Options{Workspace: t.TempDir(), MaxMessage: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var offers []protocol.Offer
	err = c.Call(ctx, protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: []protocol.PackageID{}}, &offers)
	if err == nil || !strings.Contains(err.Error(), "exceeds the host's limit of 1048576 bytes") {
		t.Fatalf("active_plugins with a 2 MB answer: %v; want the request failed naming the limit", err)
	}
	var deps []protocol.PackageID
	if err := c.Call(ctx, protocol.MethodListDeps, struct{}{}, &deps); err != nil || len(deps) != 1 {
		t.Fatalf("list_deps after the oversize answer: %v, %v; want the connection still serving", deps, err)
	}
}
