package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// fakePM is an in-process PM with every optional capability; its answers
// are its fields. A method whose name is in fail answers an error; one in
// hang waits for its context to end.
type fakePM struct {
	name    string
	offers  []protocol.Offer
	deps    []protocol.PackageID
	hits    []protocol.SearchHit
	ws      protocol.WorkspaceResult
	fail    map[string]error
	hang    map[string]bool
	initErr error

	mu        sync.Mutex
	refreshed []bool // the force flag of each refresh
}

func (f *fakePM) Name() string { return f.name }

func (f *fakePM) Initialize(ctx context.Context, s *pmserver.Session) error { return f.initErr }

func (f *fakePM) do(ctx context.Context, method string) error {
	if f.hang[method] {
		<-ctx.Done()
		return ctx.Err()
	}
	return f.fail[method]
}

func (f *fakePM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	if err := f.do(ctx, protocol.MethodActivePlugins); err != nil {
		return nil, err
	}
	return f.offers, nil
}

func (f *fakePM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	if err := f.do(ctx, protocol.MethodLoadPlugin); err != nil {
		return nil, err
	}
	var out []protocol.Offer
	for _, o := range f.offers {
		if o.ID.Name == id.Name {
			out = append(out, o)
		}
	}
	return out, nil
}

func (f *fakePM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	if err := f.do(ctx, protocol.MethodFetch); err != nil {
		return protocol.FetchResult{}, err
	}
	id.Version = "1.0.0"
	return protocol.FetchResult{ID: id, Root: "/fetched/" + id.Name}, nil
}

func (f *fakePM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	return f.deps, f.do(ctx, protocol.MethodListDeps)
}

func (f *fakePM) Search(ctx context.Context, query string) ([]protocol.SearchHit, error) {
	var out []protocol.SearchHit
	for _, h := range f.hits {
		if strings.Contains(h.ID.Name, query) {
			out = append(out, h)
		}
	}
	return out, f.do(ctx, protocol.MethodSearch)
}

func (f *fakePM) Refresh(ctx context.Context, update protocol.UpdateLevel, force bool) (bool, error) {
	f.mu.Lock()
	f.refreshed = append(f.refreshed, force)
	f.mu.Unlock()
	return true, f.do(ctx, protocol.MethodRefresh)
}

func (f *fakePM) Workspace(ctx context.Context) (protocol.WorkspaceResult, error) {
	return f.ws, f.do(ctx, protocol.MethodWorkspace)
}

// basicPM has none of the optional capabilities.
type basicPM struct{ name string }

func (b basicPM) Name() string                                              { return b.name }
func (b basicPM) Initialize(ctx context.Context, s *pmserver.Session) error { return nil }
func (b basicPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	return nil, nil
}
func (b basicPM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	return nil, nil
}
func (b basicPM) Fetch(ctx context.Context, id protocol.PackageID, update protocol.UpdateLevel) (protocol.FetchResult, error) {
	return protocol.FetchResult{}, protocol.ErrNotFound(id, "nothing here")
}

func id(pm, name, version string) protocol.PackageID {
	return protocol.PackageID{PM: pm, Name: name, Version: version}
}

func offer(pm, name string) protocol.Offer {
	return protocol.Offer{ID: id(pm, name, "1.0.0"), Root: "/roots/" + name, Manifest: json.RawMessage(`{}`)}
}

// localOptions are generous timeouts: the tests assert what happens, not
// how fast.
func localOptions(t *testing.T) host.Options {
	return host.Options{Workspace: t.TempDir(), CacheDir: t.TempDir(),
		Timeouts: host.Timeouts{Grace: 30 * time.Second, Term: 30 * time.Second, Drain: 30 * time.Second}}
}

func newLocal(t *testing.T, pm pmserver.PM, opts host.Options) *host.Conn {
	t.Helper()
	c, err := host.NewLocal(t.Context(), pm, opts)
	if err != nil {
		t.Fatalf("NewLocal: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestLocalHandshakeAndCalls(t *testing.T) {
	pm := &fakePM{name: "fake", offers: []protocol.Offer{offer("fake", "a"), offer("fake", "b")}}
	c := newLocal(t, pm, localOptions(t))
	if c.Name() != "fake" {
		t.Errorf("Name = %q, want the announced name", c.Name())
	}
	if info := c.Info(); info.ProtocolVersion != protocol.Version || info.Name != "fake" {
		t.Errorf("Info = %+v", info)
	}
	for _, cap := range []string{protocol.CapListDeps, protocol.CapSearch, protocol.CapRefresh, protocol.CapWorkspace} {
		if !c.Has(cap) {
			t.Errorf("capability %s not announced", cap)
		}
	}
	if c.PID() != 0 {
		t.Errorf("PID of an in-process PM = %d, want 0", c.PID())
	}
	var offers []protocol.Offer
	if err := c.Call(t.Context(), protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: id("fake", "b", "*")}, &offers); err != nil {
		t.Fatal(err)
	}
	if len(offers) != 1 || offers[0].ID.Name != "b" {
		t.Errorf("load_plugin b: %+v", offers)
	}
	// A result of the wrong shape is an error naming the method.
	var wrong struct{ Root int }
	err := c.Call(t.Context(), protocol.MethodFetch, protocol.FetchParams{ID: id("fake", "a", "1.0.0"), Update: protocol.UpdateNone}, &wrong)
	if err == nil || !strings.Contains(err.Error(), "wrong shape") {
		t.Errorf("decoding a fetch result into the wrong type: %v", err)
	}
	if c.Unusable() {
		t.Error("a healthy connection reports itself unusable")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if !c.Unusable() {
		t.Error("a closed connection is still usable")
	}
	if err := c.Call(t.Context(), protocol.MethodActivePlugins, protocol.ActivePluginsParams{}, &offers); err == nil {
		t.Error("a call after Close succeeded")
	}
}

func TestLocalNameChecks(t *testing.T) {
	for _, tc := range []struct {
		name, configured, want string
	}{
		{"", "", "no name"},
		{"other", "fake", `announced itself as "other" but is configured as "fake"`},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := host.Start(t.Context(), host.Spec{Name: tc.configured, InProcess: basicPM{name: tc.name}}, localOptions(t))
			var he *host.Error
			if !errors.As(err, &he) || he.Method != protocol.MethodInitialize || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Start: %v, want an initialize error containing %q", err, tc.want)
			}
		})
	}
}

func TestLocalPMError(t *testing.T) {
	pm := &fakePM{name: "fake", fail: map[string]error{
		protocol.MethodFetch: protocol.ErrNotFound(id("fake", "x", "1"), "no package x"),
	}}
	c := newLocal(t, pm, localOptions(t))
	var res protocol.FetchResult
	err := c.Call(t.Context(), protocol.MethodFetch, protocol.FetchParams{ID: id("fake", "x", "1"), Update: protocol.UpdateNone}, &res)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeNotFound || !strings.Contains(err.Error(), "no package x") {
		t.Fatalf("fetch: %v, want the PM's not-found error", err)
	}
	var he *host.Error
	if !errors.As(err, &he) || he.PM != "fake" || he.Method != protocol.MethodFetch {
		t.Errorf("error %#v does not name the PM and method", err)
	}
	if c.Unusable() {
		t.Error("an error answer made the connection unusable")
	}
}

func TestLocalInitializeRefused(t *testing.T) {
	pm := &fakePM{name: "fake", initErr: errors.New("no config here")}
	_, err := host.NewLocal(t.Context(), pm, localOptions(t))
	if err == nil || !strings.Contains(err.Error(), "no config here") {
		t.Fatalf("NewLocal: %v, want the PM's initialize error", err)
	}
}

func TestLocalTimeoutAndCancel(t *testing.T) {
	pm := &fakePM{name: "fake", hang: map[string]bool{protocol.MethodSearch: true, protocol.MethodActivePlugins: true}}
	opts := localOptions(t)
	// The timeouts under test: expiring is the point (the hanging call keeps
	// the PM from exiting at the end of its input).
	opts.Timeouts.Search, opts.Timeouts.Grace = 50*time.Millisecond, 50*time.Millisecond
	c := newLocal(t, pm, opts)
	var hits []protocol.SearchHit
	err := c.Call(t.Context(), protocol.MethodSearch, protocol.SearchParams{Query: "x"}, &hits)
	if !errors.Is(err, host.ErrNoAnswer) || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Errorf("hanging search: %v, want no answer within its timeout", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var offers []protocol.Offer
	if err := c.Call(ctx, protocol.MethodActivePlugins, protocol.ActivePluginsParams{}, &offers); !errors.Is(err, context.Canceled) {
		t.Errorf("call with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestTimeoutsFor(t *testing.T) {
	d := host.DefaultTimeouts
	for method, want := range map[string]time.Duration{
		protocol.MethodInitialize:    d.Initialize,
		protocol.MethodListDeps:      d.ListDeps,
		protocol.MethodActivePlugins: d.ActivePlugins,
		protocol.MethodLoadPlugin:    d.LoadPlugin,
		protocol.MethodFetch:         d.Fetch,
		protocol.MethodSearch:        d.Search,
		protocol.MethodRefresh:       d.Refresh,
		protocol.MethodWorkspace:     d.Workspace,
		"unknown":                    d.LoadPlugin,
	} {
		if got := d.For(method); got != want {
			t.Errorf("For(%s) = %v, want %v", method, got, want)
		}
	}
}

func TestErrorMessage(t *testing.T) {
	e := &host.Error{PM: "p", Method: "m", Err: errors.New("boom"), Stderr: []string{"1", "2", "3", "4", "5", "6"}}
	got := e.Error()
	if !strings.HasPrefix(got, "pm p: m: boom; last stderr lines:") || strings.Contains(got, "    1\n") || !strings.HasSuffix(got, "    6") {
		t.Errorf("Error() = %q, want the cause and the last five stderr lines", got)
	}
	if !errors.Is(e, e.Err) {
		t.Error("Unwrap does not reach the cause")
	}
}

// registryPMs is a registry of in-process PMs with overlapping answers.
func registryPMs(t *testing.T) (*host.Registry, *fakePM, *fakePM) {
	a := &fakePM{name: "a",
		offers: []protocol.Offer{offer("a", "one")},
		deps:   []protocol.PackageID{id("a", "z", "1"), id("a", "y", "1")},
		hits:   []protocol.SearchHit{{ID: id("a", "needle-a", "1")}},
		ws:     protocol.WorkspaceResult{Root: "/ws", Members: []protocol.WorkspaceMember{}},
	}
	b := &fakePM{name: "b",
		offers: []protocol.Offer{offer("b", "two")},
		deps:   []protocol.PackageID{id("b", "x", "2")},
		hits:   []protocol.SearchHit{{ID: id("b", "needle-b", "1")}, {ID: id("b", "other", "1")}},
		ws:     protocol.WorkspaceResult{Root: "/ws", Members: []protocol.WorkspaceMember{}},
	}
	r := host.NewRegistry(localOptions(t),
		host.Spec{Name: "a", InProcess: a}, host.Spec{Name: "b", InProcess: b}, host.Spec{Name: "c", InProcess: basicPM{name: "c"}})
	t.Cleanup(func() { r.Close() })
	return r, a, b
}

func TestRegistryUnionsAnswers(t *testing.T) {
	r, a, b := registryPMs(t)
	ctx := t.Context()
	if got := r.Names(); !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Names = %v", got)
	}
	deps, warns := r.ListDeps(ctx)
	if len(warns) != 0 {
		t.Errorf("list_deps warnings: %v", warns)
	}
	// Sorted, and the id a listed under b's name is dropped.
	if want := []protocol.PackageID{id("a", "y", "1"), id("a", "z", "1"), id("b", "x", "2")}; !slices.Equal(deps, want) {
		t.Errorf("ListDeps = %v, want %v", deps, want)
	}
	offers, warns := r.ActivePlugins(ctx, deps)
	if len(warns) != 0 || len(offers) != 2 {
		t.Errorf("ActivePlugins = %v, %v; want both PMs' offers", offers, warns)
	}
	for _, o := range offers {
		if o.PM != o.ID.PM {
			t.Errorf("offer %v attributed to pm %s", o.ID, o.PM)
		}
	}
	hits, warns := r.Search(ctx, "needle")
	if len(warns) != 0 || len(hits) != 2 || hits[0].ID.Name != "needle-a" || hits[1].ID.Name != "needle-b" {
		t.Errorf("Search = %v, %v", hits, warns)
	}
	if warns := r.Refresh(ctx, protocol.UpdateFetch, true, func(name string) bool { return name == "b" }); len(warns) != 0 {
		t.Errorf("Refresh warnings: %v", warns)
	}
	if len(a.refreshed) != 0 || !slices.Equal(b.refreshed, []bool{true}) {
		t.Errorf("refreshed a %v, b %v; want b alone, forced", a.refreshed, b.refreshed)
	}
	// Force decided PM by PM: a forced, b not, in one refresh.
	if warns := r.RefreshEach(ctx, protocol.UpdateCheck, func(name string) bool { return name == "a" }, nil); len(warns) != 0 {
		t.Errorf("RefreshEach warnings: %v", warns)
	}
	if !slices.Equal(a.refreshed, []bool{true}) || !slices.Equal(b.refreshed, []bool{true, false}) {
		t.Errorf("after RefreshEach, refreshed a %v, b %v; want a forced, b not", a.refreshed, b.refreshed)
	}
	answers, warns := r.WorkspaceAnswers(ctx)
	if len(warns) != 0 || len(answers) != 2 || answers[0].PM != "a" || answers[1].PM != "b" {
		t.Errorf("WorkspaceAnswers = %+v, %v", answers, warns)
	}
	loaded, _, err := r.LoadPlugin(ctx, id("b", "two", "*"))
	if err != nil || len(loaded) != 1 {
		t.Errorf("LoadPlugin = %v, %v", loaded, err)
	}
	if _, _, err := r.LoadPlugin(ctx, id("nope", "x", "1")); err == nil || !strings.Contains(err.Error(), `no package manager named "nope"`) {
		t.Errorf("LoadPlugin of an unconfigured pm: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestRegistryDegradesAndWarnsOnce(t *testing.T) {
	good := &fakePM{name: "good", offers: []protocol.Offer{offer("good", "one")}}
	failing := &fakePM{name: "failing", fail: map[string]error{protocol.MethodActivePlugins: errors.New("registry down")}}
	// broken answers initialize, then writes a line that is not JSON-RPC:
	// its connection breaks. (A PM that falls silent is given up the same
	// way; TestLocalTimeoutAndCancel shows the timeout, which would here
	// have to be short for it and long for the healthy PMs at once.)
	broken := &fakePM{name: "broken", offers: []protocol.Offer{offer("broken", "x")}}
	r := host.NewRegistry(localOptions(t),
		host.Spec{Name: "good", InProcess: good},
		host.Spec{Name: "failing", InProcess: failing},
		host.Spec{Name: "broken", InProcess: broken, ServeOptions: []pmserver.Option{pmserver.WithTransport(breakAfterFirst)}},
		host.Spec{Name: "misnamed", InProcess: basicPM{name: "other"}},
	)
	defer r.Close()
	for round := range 2 {
		offers, warns := r.ActivePlugins(t.Context(), nil)
		if len(offers) != 1 || offers[0].ID.Name != "one" {
			t.Errorf("round %d: offers %v, want the healthy PM's", round, offers)
		}
		var got []string
		for _, w := range warns {
			got = append(got, w.PM)
			if w.Method != protocol.MethodActivePlugins || w.String() == "" {
				t.Errorf("warning %+v", w)
			}
		}
		// The PM that answered with an error stays in; the broken one and
		// the one that never started are warned about once.
		want := []string{"failing", "broken", "misnamed"}
		if round == 1 {
			want = []string{"failing"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("round %d: warnings from %v, want %v: %v", round, got, want, warns)
		}
	}
	if _, err := r.Conn(t.Context(), "misnamed"); err == nil {
		t.Error("Conn of a PM that failed to start succeeded")
	}
}

// breakAfterFirst is a harness transport whose PM writes its first message
// (the initialize answer), then a line that is not JSON-RPC for each later
// one.
func breakAfterFirst(r io.Reader, w io.Writer) (io.Reader, io.Writer) {
	return r, &breaker{w: w}
}

type breaker struct {
	w    io.Writer
	sent bool
}

func (b *breaker) Write(p []byte) (int, error) {
	if b.sent {
		if _, err := b.w.Write([]byte("Compiling broken v0.1.0\n")); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	b.sent = true
	return b.w.Write(p)
}

// TestRegistryClosed checks that every call on a closed registry warns about
// every PM, whether it was started, given up, or never needed.
func TestRegistryClosed(t *testing.T) {
	hanging := &fakePM{name: "hanging", hang: map[string]bool{protocol.MethodActivePlugins: true}}
	opts := localOptions(t)
	// Expiring is the point.
	opts.Timeouts.ActivePlugins, opts.Timeouts.Grace = 100*time.Millisecond, 100*time.Millisecond
	r := host.NewRegistry(opts,
		host.Spec{Name: "a", InProcess: &fakePM{name: "a"}},
		host.Spec{Name: "hanging", InProcess: hanging},
		host.Spec{Name: "unused", InProcess: basicPM{name: "unused"}})
	if _, err := r.Conn(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	r.ActivePlugins(t.Context(), nil) // gives up the hanging PM
	// The hanging PM is stopped: its harness ends with its context's error.
	if err := r.Close(); err != nil && !strings.Contains(err.Error(), "pm hanging: shutdown") {
		t.Fatalf("Close: %v", err)
	}
	for round := range 2 {
		_, warns := r.ListDeps(t.Context())
		var got []string
		for _, w := range warns {
			got = append(got, w.PM)
			if !strings.Contains(w.String(), "registry closed") {
				t.Errorf("warning %q does not say the registry is closed", w)
			}
		}
		if !slices.Equal(got, []string{"a", "hanging", "unused"}) {
			t.Errorf("round %d: warnings about %v, want every PM", round, got)
		}
	}
	if _, err := r.Conn(t.Context(), "unused"); err == nil || !strings.Contains(err.Error(), "registry closed") {
		t.Errorf("Conn on a closed registry: %v", err)
	}

	// The whole hook warns about every PM for every step it would have
	// taken, the workspace step included when it is asked for, and still
	// reports the (empty) dependency set.
	for _, withWorkspace := range []bool{false, true} {
		depsCalled := false
		cb := host.HookCallbacks{
			Deps:   func([]protocol.PackageID) { depsCalled = true },
			Offers: func(string, []protocol.Offer) { t.Error("Offers called on a closed registry") },
		}
		if withWorkspace {
			cb.Workspace = func(host.WorkspaceAnswer) { t.Error("Workspace called on a closed registry") }
		}
		res := r.Hook(t.Context(), cb)
		if !depsCalled {
			t.Errorf("workspace %v: Hook on a closed registry did not call Deps", withWorkspace)
		}
		steps := map[string][]host.Warning{
			protocol.MethodListDeps:      res.ListWarnings,
			protocol.MethodActivePlugins: res.ActiveWarnings,
		}
		if withWorkspace {
			steps[protocol.MethodWorkspace] = res.WorkspaceWarnings
		} else if len(res.WorkspaceWarnings) != 0 {
			t.Errorf("workspace warnings %v without the workspace step", res.WorkspaceWarnings)
		}
		for method, warns := range steps {
			var got []string
			for _, w := range warns {
				got = append(got, w.PM)
				if w.Method != method || !strings.Contains(w.String(), "registry closed") {
					t.Errorf("%s: warning %q (method %s) does not say the registry is closed", method, w, w.Method)
				}
			}
			if !slices.Equal(got, []string{"a", "hanging", "unused"}) {
				t.Errorf("workspace %v: %s warnings about %v, want every PM", withWorkspace, method, got)
			}
		}
	}
}

// TestLocalConcurrentCalls sends many calls at once over one connection.
func TestLocalConcurrentCalls(t *testing.T) {
	pm := &fakePM{name: "fake"}
	for i := range 20 {
		pm.offers = append(pm.offers, offer("fake", fmt.Sprintf("p%02d", i)))
	}
	c := newLocal(t, pm, localOptions(t))
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range 20 {
		wg.Go(func() {
			var offers []protocol.Offer
			errs[i] = c.Call(t.Context(), protocol.MethodLoadPlugin, protocol.LoadPluginParams{ID: id("fake", fmt.Sprintf("p%02d", i), "*")}, &offers)
			if errs[i] == nil && (len(offers) != 1 || offers[0].ID.Name != fmt.Sprintf("p%02d", i)) {
				errs[i] = fmt.Errorf("call %d got %v", i, offers)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestHookAsksWorkspace: with a Workspace callback, Hook asks every PM
// announcing the capability for its workspace after its active_plugins,
// and gives the answers and warnings WorkspaceAnswers gives in a round of
// its own; a PM given up on in the hook is not asked again.
func TestHookAsksWorkspace(t *testing.T) {
	newRegistry := func() *host.Registry {
		a := &fakePM{name: "a", ws: protocol.WorkspaceResult{Root: "/ws/a", Members: []protocol.WorkspaceMember{{Name: "m", Dir: "/ws/a/m"}}}}
		b := &fakePM{name: "b", fail: map[string]error{protocol.MethodWorkspace: errors.New("no manifest")}}
		// broken's connection breaks at its first answer after initialize.
		broken := &fakePM{name: "broken", ws: protocol.WorkspaceResult{Root: "/ws/broken"}}
		r := host.NewRegistry(localOptions(t), host.Spec{Name: "b", InProcess: b}, host.Spec{Name: "a", InProcess: a},
			host.Spec{Name: "c", InProcess: basicPM{name: "c"}},
			host.Spec{Name: "broken", InProcess: broken, ServeOptions: []pmserver.Option{pmserver.WithTransport(breakAfterFirst)}})
		t.Cleanup(func() { r.Close() })
		return r
	}
	ctx := t.Context()
	r := newRegistry()
	var mu sync.Mutex
	var got []host.WorkspaceAnswer
	res := r.Hook(ctx, host.HookCallbacks{Workspace: func(a host.WorkspaceAnswer) {
		mu.Lock()
		got = append(got, a)
		mu.Unlock()
	}})
	host.SortWorkspaceAnswers(got)

	r2 := newRegistry()
	r2.Hook(ctx, host.HookCallbacks{})
	want, wantWarns := r2.WorkspaceAnswers(ctx)
	if !reflect.DeepEqual(got, want) || len(got) != 1 || got[0].PM != "a" {
		t.Errorf("answers in the hook %+v; in a round of their own %+v", got, want)
	}
	// A warning's text ends with the PM's stderr, which holds times.
	brief := func(ws []host.Warning) (out []string) {
		for _, w := range ws {
			out = append(out, w.PM+" "+w.Method+" "+strings.SplitN(w.String(), ";", 2)[0])
		}
		return out
	}
	if g, w := brief(res.WorkspaceWarnings), brief(wantWarns); !slices.Equal(g, w) || len(w) != 1 || w[0] != "b workspace pm b: workspace: no manifest" {
		t.Errorf("warnings in the hook %q; in a round of their own %q", g, w)
	}
	if len(res.ListWarnings) != 1 || res.ListWarnings[0].PM != "broken" {
		t.Errorf("list_deps warnings %v, want the PM whose connection broke (and no later step of it)", res.ListWarnings)
	}
	if res := r.Hook(ctx, host.HookCallbacks{}); res.WorkspaceWarnings != nil {
		t.Errorf("workspace warnings without a Workspace callback: %v", res.WorkspaceWarnings)
	}
}
