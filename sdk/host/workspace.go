package host

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// WorkspaceAnswer is one PM's answer to the workspace method, with the PM
// that gave it.
type WorkspaceAnswer struct {
	PM string
	protocol.WorkspaceResult
}

// WorkspaceAnswers asks every PM announcing the workspace capability for
// its view of the workspace, and says which PM gave each answer (a host
// needs the name to tell the user which PM reported a directory it refuses).
func (r *Registry) WorkspaceAnswers(ctx context.Context) ([]WorkspaceAnswer, []Warning) {
	var mu sync.Mutex
	var all []WorkspaceAnswer
	var sink diagSink
	warns := r.each(ctx, protocol.MethodWorkspace, func(c *Conn) error {
		if !c.Has(protocol.CapWorkspace) {
			return nil
		}
		var res protocol.WorkspaceResult
		ds, err := c.CallDiagnostics(ctx, protocol.MethodWorkspace, struct{}{}, &res)
		if err != nil {
			return err
		}
		sink.add(c.Name(), protocol.MethodWorkspace, ds)
		mu.Lock()
		all = append(all, WorkspaceAnswer{PM: c.Name(), WorkspaceResult: res})
		mu.Unlock()
		return nil
	})
	slices.SortStableFunc(all, func(a, b WorkspaceAnswer) int { return strings.Compare(a.PM, b.PM) })
	return all, append(warns, sink.warnings(r.Names())...)
}
