package host

import (
	"context"
	"slices"
	"sync"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// HookCallbacks receive the answers of Registry.Hook as they arrive.
type HookCallbacks struct {
	// Deps, when not nil, is called once, when every PM's list_deps has
	// answered or failed, with the union of their dependencies (sorted,
	// without repeats). It is called before Hook returns, even when the
	// registry is closed.
	Deps func(deps []protocol.PackageID)
	// Offers, when not nil, is called once per PM whose active_plugins
	// answered, from that PM's own goroutine and as soon as its answer is
	// in, with its offers in the PM's order (those under another PM's name
	// dropped). It runs while other PMs may still be answering, and may be
	// called for several PMs at once. It may wait for Deps to have been
	// called: a PM's list_deps step always ends before its Offers call.
	Offers func(pm string, offers []protocol.Offer)
	// Workspace, when not nil, makes Hook also ask each PM announcing the
	// workspace capability for its workspace right after its
	// active_plugins step (whether or not that answered; a PM given up on
	// is not asked), while its offers are with Offers, rather than in a
	// round of its own once every PM is done. It is called with each
	// answer as it arrives (before or after that PM's Offers call), and
	// may be called for several PMs at once; HookResult.WorkspaceWarnings
	// holds the warnings. Together they are what Registry.WorkspaceAnswers
	// returns (once sorted with SortWorkspaceAnswers).
	Workspace func(WorkspaceAnswer)
}

// HookResult is what Registry.Hook returns once every PM is done.
type HookResult struct {
	// Deps is the union of the PMs' direct dependencies, as ListDeps
	// returns it.
	Deps []protocol.PackageID
	// ListWarnings are the warnings of list_deps, as ListDeps returns
	// them; ActiveWarnings those of active_plugins, as ActivePlugins
	// returns them (an id minted under another pm's name is warned about
	// PM by PM in configuration order).
	ListWarnings, ActiveWarnings []Warning
	// WorkspaceWarnings are those of the workspace step, when
	// HookCallbacks.Workspace asked for it, as WorkspaceAnswers returns
	// them.
	WorkspaceWarnings []Warning
}

// Hook runs the hook on every PM at once, with no barrier across PMs: each
// PM answers list_deps and then active_plugins, handed the dependencies it
// reported itself (list_deps keeps only those under the PM's own name, so
// this is what ActivePlugins would hand it after ListDeps). A PM's offers go
// to cb.Offers as soon as they are in, while the others still run. The
// result and its warnings are those of ListDeps followed by ActivePlugins,
// in the same order.
func (r *Registry) Hook(ctx context.Context, cb HookCallbacks) HookResult {
	n := len(r.specs)
	var (
		listSink, activeSink diagSink
		workSink             diagSink
		listWarns            = make([][]Warning, n)
		activeWarns          = make([][]Warning, n)
		workWarns            = make([][]Warning, n)
		minted               = make([]*Warning, n)
		perPM                = make([][]protocol.PackageID, n)
		res                  HookResult
		listed               sync.WaitGroup
		depsDone             = make(chan struct{})
	)
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		for _, s := range r.specs {
			res.ListWarnings = append(res.ListWarnings, closedWarning(s.Name, protocol.MethodListDeps))
			res.ActiveWarnings = append(res.ActiveWarnings, closedWarning(s.Name, protocol.MethodActivePlugins))
			if cb.Workspace != nil {
				res.WorkspaceWarnings = append(res.WorkspaceWarnings, closedWarning(s.Name, protocol.MethodWorkspace))
			}
		}
		if cb.Deps != nil {
			cb.Deps(nil)
		}
		return res
	}
	listed.Add(n)
	go func() {
		listed.Wait()
		for _, d := range perPM {
			res.Deps = append(res.Deps, d...)
		}
		sortIDs(res.Deps)
		res.Deps = slices.Compact(res.Deps)
		if cb.Deps != nil {
			cb.Deps(res.Deps)
		}
		close(depsDone)
	}()
	var wg sync.WaitGroup
	for i, s := range r.specs {
		wg.Go(func() {
			listWarns[i] = r.step(ctx, s.Name, protocol.MethodListDeps, func(c *Conn) error {
				deps, err := listDeps(ctx, c, &listSink)
				perPM[i] = deps
				return err
			})
			listed.Done()
			var offers []protocol.Offer
			answered := false
			activeWarns[i] = r.step(ctx, s.Name, protocol.MethodActivePlugins, func(c *Conn) error {
				own := perPM[i]
				if own == nil {
					own = []protocol.PackageID{}
				}
				var err error
				offers, minted[i], err = activePlugins(ctx, c, own, &activeSink)
				answered = err == nil
				return err
			})
			// The workspace question goes out before the offers are handed
			// over: the PM answers it while they are judged.
			var asked sync.WaitGroup
			if cb.Workspace != nil {
				asked.Go(func() {
					workWarns[i] = r.step(ctx, s.Name, protocol.MethodWorkspace, func(c *Conn) error {
						a, ok, err := workspaceAnswer(ctx, c, &workSink)
						if ok {
							cb.Workspace(a)
						}
						return err
					})
				})
			}
			if answered && cb.Offers != nil {
				cb.Offers(s.Name, offers)
			}
			asked.Wait()
		})
	}
	wg.Wait()
	<-depsDone
	names := r.Names()
	res.ListWarnings = append(slices.Concat(listWarns...), listSink.warnings(names)...)
	res.ActiveWarnings = append(append(slices.Concat(activeWarns...), present(minted)...), activeSink.warnings(names)...)
	if cb.Workspace != nil {
		res.WorkspaceWarnings = append(slices.Concat(workWarns...), workSink.warnings(names)...)
	}
	return res
}

// present returns the warnings that are not nil, in order.
func present(ws []*Warning) []Warning {
	var out []Warning
	for _, w := range ws {
		if w != nil {
			out = append(out, *w)
		}
	}
	return out
}
