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
		a, ok, err := workspaceAnswer(ctx, c, &sink)
		if ok {
			mu.Lock()
			all = append(all, a)
			mu.Unlock()
		}
		return err
	})
	SortWorkspaceAnswers(all)
	return all, append(warns, sink.warnings(r.Names())...)
}

// SortWorkspaceAnswers puts answers in the order WorkspaceAnswers returns
// them: by PM name.
func SortWorkspaceAnswers(answers []WorkspaceAnswer) {
	slices.SortStableFunc(answers, func(a, b WorkspaceAnswer) int { return strings.Compare(a.PM, b.PM) })
}

// workspaceAnswer asks c for its workspace when it announces the
// capability (ok reports that it answered), keeping the diagnostics it
// sent while answering in sink.
func workspaceAnswer(ctx context.Context, c *Conn, sink *diagSink) (a WorkspaceAnswer, ok bool, err error) {
	if !c.Has(protocol.CapWorkspace) {
		return a, false, nil
	}
	var res protocol.WorkspaceResult
	ds, err := c.CallDiagnostics(ctx, protocol.MethodWorkspace, struct{}{}, &res)
	if err != nil {
		return a, false, err
	}
	sink.add(c.Name(), protocol.MethodWorkspace, ds)
	return WorkspaceAnswer{PM: c.Name(), WorkspaceResult: res}, true, nil
}
