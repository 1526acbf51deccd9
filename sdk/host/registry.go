package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Warning reports a PM that contributed nothing to one call, and why; or,
// when Diagnostic is set, a problem the PM itself reported while answering
// (docs/protocol.md §4.7), whose text Err holds.
type Warning struct {
	PM     string
	Method string
	Err    error
	// Diagnostic is the PM's diagnostic this warning carries, or nil.
	Diagnostic *protocol.Diagnostic
}

func (w Warning) String() string { return w.Err.Error() }

// Offered is an offer together with the PM that made it.
type Offered struct {
	PM string
	protocol.Offer
}

// Registry holds the PMs of one host invocation. Each is started on first
// need and kept running until Close; one that fails to start is not retried.
// A PM that fails to start, dies or falls silent is warned about by the first
// multi-PM call only (see each).
// Every method degrades: a failing PM is reported in the warnings and the
// others' answers are still returned.
type Registry struct {
	opts  Options
	specs []Spec

	mu     sync.Mutex
	conns  map[string]*slot
	closed bool // Close was called: every later call fails
}

// errRegistryClosed is why a PM is not reached once its registry is closed.
var errRegistryClosed = errors.New("registry closed")

// closedWarning is the warning about the PM named pm for a call of method
// made once the registry is closed.
func closedWarning(pm, method string) Warning {
	return Warning{PM: pm, Method: method, Err: fmt.Errorf("pm %s: %s: %w", pm, method, errRegistryClosed)}
}

type slot struct {
	once sync.Once
	conn *Conn
	err  error
	// reported is set once a start failure has been returned as a warning.
	reported atomic.Bool
	// gaveUp is set once a multi-PM call found the PM dead or silent.
	gaveUp atomic.Bool
	// initTaken is set once the diagnostics the PM sent while answering
	// initialize have been returned as warnings.
	initTaken atomic.Bool
}

// NewRegistry returns a registry of the PMs in specs; none is started yet.
func NewRegistry(opts Options, specs ...Spec) *Registry {
	return &Registry{opts: opts, specs: specs, conns: make(map[string]*slot)}
}

// Names returns the configured PM names, in configuration order.
func (r *Registry) Names() []string {
	names := make([]string, len(r.specs))
	for i, s := range r.specs {
		names[i] = s.Name
	}
	return names
}

// Conn returns the running PM named name, starting it if needed.
func (r *Registry) Conn(ctx context.Context, name string) (*Conn, error) {
	i := slices.IndexFunc(r.specs, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("no package manager named %q is configured", name)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("pm %s: %w", name, errRegistryClosed)
	}
	s, ok := r.conns[name]
	if !ok {
		s = &slot{}
		r.conns[name] = s
	}
	r.mu.Unlock()
	s.once.Do(func() {
		s.conn, s.err = Start(ctx, r.specs[i], r.opts)
		if s.err != nil {
			// The caller reports it, as a warning of the call that needed it.
			r.logger().Debug("package manager unavailable", "pm", name, "err", s.err)
		}
	})
	return s.conn, s.err
}

func (r *Registry) logger() *slog.Logger {
	if r.opts.Logger != nil {
		return r.opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// each runs f on every PM concurrently (starting them as needed) and
// collects the warnings of those that fail, in configuration order. A PM
// that failed to start, exited, broke its output or did not answer in time
// is reported by the first call that found it so and left out of later
// ones, so that one host invocation warns about it once; a PM that answered
// with an error stays in. Once the registry is closed, every PM is warned
// about in every call.
func (r *Registry) each(ctx context.Context, method string, f func(*Conn) error) []Warning {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		out := make([]Warning, len(r.specs))
		for i, s := range r.specs {
			out[i] = closedWarning(s.Name, method)
		}
		return out
	}
	warns := make([][]Warning, len(r.specs))
	var wg sync.WaitGroup
	for i, s := range r.specs {
		wg.Go(func() { warns[i] = r.step(ctx, s.Name, method, f) })
	}
	wg.Wait()
	return slices.Concat(warns...)
}

// step runs f on the PM named name (starting it if needed) for one call of
// each, and returns the warnings about it: the diagnostics it sent while
// answering initialize, when this is the first call to use it, then why
// it failed, if it did (see each).
func (r *Registry) step(ctx context.Context, name, method string, f func(*Conn) error) []Warning {
	c, err := r.Conn(ctx, name)
	r.mu.Lock()
	sl := r.conns[name]
	r.mu.Unlock()
	var out []Warning
	if err == nil && sl != nil {
		out = initWarnings(sl, c)
	}
	switch {
	case sl == nil:
		// Conn refused before making a slot: the registry was closed.
	case err != nil:
		if !sl.reported.CompareAndSwap(false, true) {
			return nil
		}
	case sl.gaveUp.Load():
		return nil
	default:
		err = f(c)
		// A PM that has exited, broken its output or not answered in
		// time is warned about once, then left out of later calls
		// rather than failing (or timing out) again in each.
		if err != nil && (errors.Is(err, ErrNoAnswer) || c.Unusable()) {
			sl.gaveUp.Store(true)
		}
	}
	if err != nil {
		out = append(out, Warning{PM: name, Method: method, Err: err})
	}
	return out
}

// initWarnings returns the diagnostics c sent while answering initialize
// as warnings, the first time it is called for its slot sl, and nil after.
func initWarnings(sl *slot, c *Conn) []Warning {
	ds := c.InitializeDiagnostics()
	if len(ds) == 0 || !sl.initTaken.CompareAndSwap(false, true) {
		return nil
	}
	var sink diagSink
	sink.add(c.Name(), protocol.MethodInitialize, ds)
	return sink.warnings([]string{c.Name()})
}

// ListDeps unions the direct dependencies every PM announcing list_deps
// reports.
func (r *Registry) ListDeps(ctx context.Context) ([]protocol.PackageID, []Warning) {
	var mu sync.Mutex
	var all []protocol.PackageID
	var sink diagSink
	warns := r.each(ctx, protocol.MethodListDeps, func(c *Conn) error {
		deps, err := listDeps(ctx, c, &sink)
		mu.Lock()
		all = append(all, deps...)
		mu.Unlock()
		return err
	})
	sortIDs(all)
	return slices.Compact(all), append(warns, sink.warnings(r.Names())...)
}

// listDeps asks c for its direct dependencies (none when it does not
// announce list_deps), keeping those under its own name, sorted and without
// repeats; its diagnostics go to sink.
func listDeps(ctx context.Context, c *Conn, sink *diagSink) ([]protocol.PackageID, error) {
	if !c.Has(protocol.CapListDeps) {
		return nil, nil
	}
	var deps []protocol.PackageID
	ds, err := c.CallDiagnostics(ctx, protocol.MethodListDeps, struct{}{}, &deps)
	if err != nil {
		return nil, err
	}
	sink.add(c.Name(), protocol.MethodListDeps, ds)
	deps = slices.DeleteFunc(deps, func(d protocol.PackageID) bool { return d.PM != c.Name() })
	sortIDs(deps)
	return slices.Compact(deps), nil
}

// ActivePlugins asks every PM for its active plugins, handing each the deps
// it owns. Offers under another PM's name are dropped with a warning.
func (r *Registry) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]Offered, []Warning) {
	var mu sync.Mutex
	var all []Offered
	minted := make([]*Warning, len(r.specs))
	var sink diagSink
	names := r.Names()
	warns := r.each(ctx, protocol.MethodActivePlugins, func(c *Conn) error {
		own := []protocol.PackageID{}
		for _, d := range deps {
			if d.PM == c.Name() {
				own = append(own, d)
			}
		}
		offers, m, err := activePlugins(ctx, c, own, &sink)
		if err != nil {
			return err
		}
		minted[slices.Index(names, c.Name())] = m
		mu.Lock()
		defer mu.Unlock()
		for _, o := range offers {
			all = append(all, Offered{PM: c.Name(), Offer: o})
		}
		return nil
	})
	for _, m := range minted {
		if m != nil {
			warns = append(warns, *m)
		}
	}
	return all, append(warns, sink.warnings(names)...)
}

// activePlugins asks c for the plugins its deps own activate. Offers under
// another PM's name are dropped, and the returned warning, when not nil,
// names them all; c's diagnostics go to sink.
func activePlugins(ctx context.Context, c *Conn, own []protocol.PackageID, sink *diagSink) ([]protocol.Offer, *Warning, error) {
	var offers []protocol.Offer
	ds, err := c.CallDiagnostics(ctx, protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: own}, &offers)
	if err != nil {
		return nil, nil, err
	}
	sink.add(c.Name(), protocol.MethodActivePlugins, ds)
	var foreign []string
	offers = slices.DeleteFunc(offers, func(o protocol.Offer) bool {
		if o.ID.PM != c.Name() {
			foreign = append(foreign, o.ID.String())
			return true
		}
		return false
	})
	if len(foreign) == 0 {
		return offers, nil, nil
	}
	// One warning per PM, however many ids it minted.
	each := ""
	if len(foreign) > 1 {
		each = " each"
	}
	return offers, &Warning{PM: c.Name(), Method: protocol.MethodActivePlugins,
		Err: fmt.Errorf("pm %s offered %s,%s an id under another pm's name; dropped", c.Name(), strings.Join(foreign, ", "), each)}, nil
}

// LoadPlugin asks the PM named by id.PM to load id. The diagnostics the PM
// sent while answering (docs/protocol.md §4.7) come back as warnings, each
// carrying its Diagnostic, as ListDeps and ActivePlugins return theirs.
func (r *Registry) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, []Warning, error) {
	var offers []protocol.Offer
	warns, err := r.callOne(ctx, id.PM, protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: id}, &offers)
	return offers, warns, err
}

// Fetch asks the PM named by id.PM to fetch id. The diagnostics the PM
// sent while answering come back as warnings, as LoadPlugin returns its.
func (r *Registry) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, []Warning, error) {
	var res protocol.FetchResult
	warns, err := r.callOne(ctx, id.PM, protocol.MethodFetch, protocol.FetchParams{ID: id, Update: update}, &res)
	return res, warns, err
}

// callOne calls method on the PM named name (starting it if needed) and
// returns its diagnostics as warnings: those it sent while answering
// initialize, when this is the first call to use it, then this call's.
// A call that fails returns its error and no warnings.
func (r *Registry) callOne(ctx context.Context, name, method string, params, result any) ([]Warning, error) {
	c, err := r.Conn(ctx, name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	sl := r.conns[name]
	r.mu.Unlock()
	ds, err := c.CallDiagnostics(ctx, method, params, result)
	if err != nil {
		return nil, err
	}
	var warns []Warning
	if sl != nil {
		warns = initWarnings(sl, c)
	}
	var sink diagSink
	sink.add(name, method, ds)
	return append(warns, sink.warnings([]string{name})...), nil
}

// Search asks every PM announcing search and unions the hits. The
// diagnostics the PMs sent while answering are warnings after those of the
// PMs that failed, PM by PM in configuration order.
func (r *Registry) Search(ctx context.Context, query string) ([]protocol.SearchHit, []Warning) {
	var mu sync.Mutex
	var all []protocol.SearchHit
	var sink diagSink
	warns := r.each(ctx, protocol.MethodSearch, func(c *Conn) error {
		if !c.Has(protocol.CapSearch) {
			return nil
		}
		var hits []protocol.SearchHit
		ds, err := c.CallDiagnostics(ctx, protocol.MethodSearch, protocol.SearchParams{Query: query}, &hits)
		if err != nil {
			return err
		}
		sink.add(c.Name(), protocol.MethodSearch, ds)
		mu.Lock()
		all = append(all, hits...)
		mu.Unlock()
		return nil
	})
	slices.SortStableFunc(all, func(a, b protocol.SearchHit) int { return compareIDs(a.ID, b.ID) })
	return all, append(warns, sink.warnings(r.Names())...)
}

// Refresh asks the PMs announcing refresh whose names only accepts (every
// one when only is nil) to pull their backing sources, sending each of them
// force (protocol §6.7: override a source's opt-out of automatic updates).
//
// The diagnostics the PMs sent while answering are warnings after those
// of the PMs that failed, PM by PM in configuration order.
func (r *Registry) Refresh(ctx context.Context, update protocol.UpdateLevel, force bool, only func(name string) bool) []Warning {
	return r.RefreshEach(ctx, update, func(string) bool { return force }, only)
}

// RefreshEach is Refresh with force decided PM by PM: the PM named name is
// sent force(name) (false for every PM when force is nil), so that one
// refresh can force the sources that need it (a registry never fetched,
// which an opt-out of automatic updates would otherwise leave empty) and
// leave the others' opt-out alone.
func (r *Registry) RefreshEach(ctx context.Context, update protocol.UpdateLevel, force, only func(name string) bool) []Warning {
	var sink diagSink
	warns := r.each(ctx, protocol.MethodRefresh, func(c *Conn) error {
		if only != nil && !only(c.Name()) || !c.Has(protocol.CapRefresh) {
			return nil
		}
		var res protocol.RefreshResult
		params := protocol.RefreshParams{Update: update, Force: force != nil && force(c.Name())}
		ds, err := c.CallDiagnostics(ctx, protocol.MethodRefresh, params, &res)
		sink.add(c.Name(), protocol.MethodRefresh, ds)
		return err
	})
	return append(warns, sink.warnings(r.Names())...)
}

// Close shuts every started PM down and returns the first shutdown error.
// Every later call on the registry fails, warning about each PM.
func (r *Registry) Close() error {
	r.mu.Lock()
	r.closed = true
	slots := make([]*slot, 0, len(r.conns))
	for _, s := range r.conns {
		slots = append(slots, s)
	}
	r.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(slots))
	for i, s := range slots {
		wg.Go(func() {
			s.once.Do(func() { s.err = errRegistryClosed })
			if s.conn != nil {
				errs[i] = s.conn.Close()
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func compareIDs(a, b protocol.PackageID) int {
	return cmp.Or(strings.Compare(a.PM, b.PM), strings.Compare(a.Name, b.Name), strings.Compare(a.Version, b.Version))
}

func sortIDs(ids []protocol.PackageID) { slices.SortFunc(ids, compareIDs) }
