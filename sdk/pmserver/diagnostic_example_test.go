package pmserver_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// lockPM lists its dependencies from a lockfile, and says when it had to
// skip one: the host shows the diagnostic to the user beside the answer.
type lockPM struct{ shelfPM }

func (p *lockPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	pmserver.Warn(ctx, pmserver.Diagnostic{
		Message: `/ws/shelf.lock:3: entry "broken" has no version; it is left out (run shelf lock to rewrite the file)`,
		File:    "/ws/shelf.lock",
		Line:    3,
	})
	return []protocol.PackageID{{PM: "shelf", Name: "hello", Version: "1.0.0"}}, nil
}

// A handler hands the host a diagnostic with Warn (or Info); the harness
// writes it as a notification naming the request, before the response.
func ExampleWarn() {
	requests := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1,"workspace":"/ws","cache_dir":"/cache","env":{}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"list_deps"}`,
	}, "\n")
	err := pmserver.Serve(context.Background(), &lockPM{}, strings.NewReader(requests), os.Stdout,
		pmserver.WithVersion("1.0.0"))
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"shelf","capabilities":["list_deps"],"version":"1.0.0"}}
	// {"jsonrpc":"2.0","method":"diagnostic","params":{"request":2,"level":"warning","message":"/ws/shelf.lock:3: entry \"broken\" has no version; it is left out (run shelf lock to rewrite the file)","file":"/ws/shelf.lock","line":3}}
	// {"jsonrpc":"2.0","id":2,"result":[{"pm":"shelf","name":"hello","version":"1.0.0"}]}
}
