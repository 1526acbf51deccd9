package pmserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/creachadair/jrpc2"
	"github.com/creachadair/jrpc2/handler"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// DefaultConcurrency is how many requests a PM handles at once by default.
const DefaultConcurrency = 64

// config holds the settings Options adjust.
type config struct {
	version     string
	description string
	example     string // the command --help suggests; see WithExample
	maxMessage  int
	concurrency int
	logger      *slog.Logger
	transport   func(io.Reader, io.Writer) (io.Reader, io.Writer)
}

// Option adjusts how a PM is served.
type Option func(*config)

// WithVersion sets the PM software version announced at initialize and
// printed by --version. By default it is the main module's version from the
// binary's build information.
func WithVersion(v string) Option { return func(c *config) { c.version = v } }

// WithDescription sets the sentence --help and a terminal on stdin print
// about what this PM serves.
func WithDescription(d string) Option { return func(c *config) { c.description = d } }

// WithMaxMessageSize bounds the size of one request line in bytes (default
// 64 MiB). A larger line is answered with an invalid-request error.
func WithMaxMessageSize(n int) Option { return func(c *config) { c.maxMessage = n } }

// WithLogger sets the logger handed to the PM in its Session and used by the
// harness. By default Main logs to stderr at the level in SYMPOSIUM_LOG.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithTransport interposes on the protocol streams: f receives the request
// reader and the response writer and returns the ones to serve on. It exists
// for test PMs that misbehave on the wire on purpose.
func WithTransport(f func(io.Reader, io.Writer) (io.Reader, io.Writer)) Option {
	return func(c *config) { c.transport = f }
}

func newConfig(opts []Option) *config {
	c := &config{maxMessage: framing.DefaultMaxMessage, concurrency: DefaultConcurrency}
	for _, o := range opts {
		o(c)
	}
	if c.version == "" {
		c.version = BuildVersion()
	}
	if c.logger == nil {
		c.logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// BuildVersion returns the main module's version from the binary's build
// information ("v1.2.3" when installed with go install ...@v1.2.3), or
// "devel" for a build from a work tree. It is what Main announces by default.
func BuildVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// Serve serves pm on one connection: requests are read from r, one per line,
// and responses written to w. It returns nil once r reaches end of input and
// every request read has been answered, or ctx's error when ctx ends first
// (in-flight requests are then cancelled).
func Serve(ctx context.Context, pm PM, r io.Reader, w io.Writer, opts ...Option) error {
	cfg := newConfig(opts)
	if cfg.transport != nil {
		r, w = cfg.transport(r, w)
	}
	// pm.Name is not read here: it is read once Initialize has returned.
	s := &server{pm: pm, cfg: cfg, log: cfg.logger}
	ch := newLineChannel(r, w, cfg.maxMessage, s.log)
	s.ch = ch
	srv := jrpc2.NewServer(s.assigner(), &jrpc2.ServerOptions{
		DisableBuiltin: true,
		Concurrency:    cfg.concurrency,
	})
	srv.Start(ch)
	done := make(chan jrpc2.ServerStatus, 1)
	go func() { done <- srv.WaitStatus() }()
	select {
	case st := <-done:
		if err := ch.failed(); err != nil {
			return fmt.Errorf("serving %s: %w", s.announced(), err)
		}
		if st.Err != nil {
			return fmt.Errorf("serving %s: %w", s.announced(), st.Err)
		}
		return nil
	case <-ch.cut:
		srv.Stop()
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		return fmt.Errorf("serving %s: %w", s.announced(), ch.failed())
	case <-ctx.Done():
		ch.Close()
		srv.Stop()
		// The request reader may be blocked reading r, which nothing here can
		// interrupt; it ends when r does.
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		return ctx.Err()
	}
}

// server holds the state of one connection.
type server struct {
	pm  PM
	cfg *config
	log *slog.Logger
	ch  *lineChannel

	mu          sync.Mutex
	initialized bool
	initStarted bool
	name        string // the name announced at initialize
}

// logger returns the connection's logger, labelled with the PM's name once
// it is initialized.
func (s *server) logger() *slog.Logger {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log
}

// announced returns the name announced at initialize, or a placeholder
// before any initialize succeeded.
func (s *server) announced() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.name == "" {
		return "the PM (not initialized)"
	}
	return s.name
}

func (s *server) assigner() handler.Map {
	return handler.Map{
		protocol.MethodInitialize:    s.guard(protocol.MethodInitialize, s.initialize),
		protocol.MethodActivePlugins: s.guard(protocol.MethodActivePlugins, s.activePlugins),
		protocol.MethodLoadPlugin:    s.guard(protocol.MethodLoadPlugin, s.loadPlugin),
		protocol.MethodListDeps:      s.guard(protocol.MethodListDeps, s.listDeps),
		protocol.MethodSearch:        s.guard(protocol.MethodSearch, s.search),
		protocol.MethodFetch:         s.guard(protocol.MethodFetch, s.fetch),
		protocol.MethodRefresh:       s.guard(protocol.MethodRefresh, s.refresh),
		protocol.MethodWorkspace:     s.guard(protocol.MethodWorkspace, s.workspace),
	}
}

// guard wraps a method: the initialize check, panic recovery, and the
// translation of errors into protocol errors.
func (s *server) guard(method string, h func(context.Context, json.RawMessage) (any, error)) jrpc2.Handler {
	return func(ctx context.Context, req *jrpc2.Request) (result any, err error) {
		if method != protocol.MethodInitialize {
			s.mu.Lock()
			ok := s.initialized
			s.mu.Unlock()
			if !ok || s.ch.readBeforeInitialize(req.ID()) {
				return nil, wireError(protocol.NewError(protocol.CodeNotInitialized, nil,
					"%s before initialize: send initialize first", method))
			}
		}
		defer func() {
			if p := recover(); p != nil {
				s.logger().Error("handler panicked", "method", method, "panic", p, "stack", string(debug.Stack()))
				result, err = nil, wireError(protocol.NewError(protocol.CodeInternalError, nil,
					"%s: internal error: the PM panicked: %v", method, p))
			}
		}()
		// Diagnostics the handler sends go out before its response: finish
		// runs as the handler returns, and jrpc2 writes the response after.
		ctx, rd := withDiagnostics(ctx, s.ch, req.ID())
		defer rd.finish()
		params := s.ch.takeParams(req.ID())
		result, err = h(withRequest(ctx, s, json.RawMessage(req.ID()), params), params)
		if err != nil {
			s.logger().Debug("request failed", "method", method, "err", err)
			return nil, wireError(err)
		}
		return result, nil
	}
}

// wireError converts err to the jrpc2 error sent on the wire.
func wireError(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return &jrpc2.Error{Code: jrpc2.Code(pe.Code), Message: pe.Message, Data: pe.Data}
	}
	return &jrpc2.Error{Code: jrpc2.Code(protocol.CodeInternalError), Message: err.Error()}
}

// decode unmarshals params into v; absent params leave v at its zero value.
func decode(method string, params json.RawMessage, v any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, v); err != nil {
		err = jsonfile.ExplainValue(params, err) // in the params' terms
		return protocol.NewError(protocol.CodeInvalidParams, nil, "%s: invalid params: %v", method, err)
	}
	return nil
}

func invalidParams(method, format string, args ...any) error {
	return protocol.NewError(protocol.CodeInvalidParams, nil, "%s: invalid params: %s", method, fmt.Sprintf(format, args...))
}

func (s *server) initialize(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.InitializeParams
	if err := decode(protocol.MethodInitialize, raw, &p); err != nil {
		return nil, err
	}
	if p.ProtocolVersion <= 0 {
		return nil, invalidParams(protocol.MethodInitialize, "protocol_version must be a positive integer")
	}
	s.mu.Lock()
	if s.initStarted {
		s.mu.Unlock()
		return nil, protocol.NewError(protocol.CodeInvalidRequest, nil, "initialize: already initialized")
	}
	s.initStarted = true
	s.mu.Unlock()

	// Version negotiation: a PM asked for a version it does not speak answers
	// with its own, and initializes exactly as for its own version, so the
	// handshake either succeeds completely or fails completely. The host
	// compares the version answered with the one it asked for and decides
	// whether to go on or to end the connection.
	if p.ProtocolVersion != protocol.Version {
		s.logger().Warn("host asked for an unknown protocol version; answering with ours",
			"asked", p.ProtocolVersion, "ours", protocol.Version)
	}
	sess := &Session{
		ProtocolVersion:  protocol.Version,
		RequestedVersion: p.ProtocolVersion,
		Workspace:        p.Workspace,
		CacheDir:         p.CacheDir,
		Env:              NewEnv(p.Env),
		Logger:           s.logger(),
	}
	if err := s.pm.Initialize(ctx, sess); err != nil {
		s.mu.Lock()
		s.initStarted = false
		s.mu.Unlock()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	// The name is read once, now that Initialize has returned, so a PM may
	// take it from the initialize env; every later check uses this copy.
	result := protocol.InitializeResult{
		ProtocolVersion: protocol.Version,
		Name:            s.pm.Name(),
		Capabilities:    Capabilities(s.pm),
		Version:         s.cfg.version,
	}
	if result.Name == "" {
		s.mu.Lock()
		s.initStarted = false
		s.mu.Unlock()
		return nil, fmt.Errorf("initialize: the PM has no name to announce")
	}
	s.mu.Lock()
	s.initialized = true
	s.name = result.Name
	s.log = s.log.With("pm", result.Name)
	s.mu.Unlock()
	return result, nil
}

// pmName returns the name the PM announced at initialize: the harness reads
// PM.Name once per connection and serves every later check from this copy.
func (s *server) pmName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// checkID refuses ids that are malformed or belong to another PM.
func (s *server) checkID(method string, id protocol.PackageID) error {
	name := s.pmName()
	switch {
	case id.PM != name:
		return protocol.ErrForeignID(id, "%s: id %s belongs to pm %q, not %q", method, id, id.PM, name)
	case id.Name == "":
		return protocol.ErrForeignID(id, "%s: id %s has no name", method, id)
	}
	return nil
}

// checkMinted refuses results that carry ids minted under another PM's name,
// or inexact versions: a bug in the PM, reported as an internal error.
func (s *server) checkMinted(method string, ids ...protocol.PackageID) error {
	name := s.pmName()
	for _, id := range ids {
		if id.PM != name {
			return fmt.Errorf("%s: the PM returned id %s under pm %q; it may only mint ids for %q",
				method, id, id.PM, name)
		}
		if id.Name == "" || id.Version == "" {
			return fmt.Errorf("%s: the PM returned id %s without a name or version", method, id)
		}
	}
	return nil
}

func (s *server) checkOffers(method string, offers []protocol.Offer) ([]protocol.Offer, error) {
	if offers == nil {
		return []protocol.Offer{}, nil
	}
	for i, o := range offers {
		if err := s.checkMinted(method, o.ID); err != nil {
			return nil, err
		}
		if len(o.Manifest) == 0 {
			offers[i].Manifest = json.RawMessage("{}")
		}
	}
	return offers, nil
}

func (s *server) activePlugins(ctx context.Context, raw json.RawMessage) (any, error) {
	if sp, ok := s.pm.(StreamedActivePlugins); ok {
		vs, ok, err := sp.ActivePluginsStreamed(ctx, raw)
		if err != nil {
			return nil, err
		}
		if ok {
			if res, ok := s.streamResult(ctx, protocol.MethodActivePlugins, vs); ok {
				return res, nil
			}
		}
	}
	if vp, ok := s.pm.(VettedActivePlugins); ok {
		res, ok, err := vp.ActivePluginsVetted(ctx, raw)
		switch {
		case err != nil:
			return nil, err
		case ok:
			return s.rawResult(ctx, protocol.MethodActivePlugins, json.RawMessage(res), true)
		}
	}
	if rp, ok := s.pm.(RawActivePlugins); ok {
		res, ok, err := rp.ActivePluginsRaw(ctx, raw)
		switch {
		case err != nil:
			return nil, err
		case ok:
			return s.rawResult(ctx, protocol.MethodActivePlugins, res, false)
		}
	}
	var p protocol.ActivePluginsParams
	if err := decode(protocol.MethodActivePlugins, raw, &p); err != nil {
		return nil, err
	}
	own := make([]protocol.PackageID, 0, len(p.Deps))
	name := s.pmName()
	for _, d := range p.Deps {
		if d.PM == name {
			own = append(own, d)
		}
	}
	offers, err := s.pm.ActivePlugins(ctx, own)
	if err != nil {
		return nil, err
	}
	return s.checkOffers(protocol.MethodActivePlugins, offers)
}

func (s *server) loadPlugin(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.LoadPluginParams
	if err := decode(protocol.MethodLoadPlugin, raw, &p); err != nil {
		return nil, err
	}
	if p.ID.Version == "" {
		p.ID.Version = protocol.AnyVersion
	}
	if err := s.checkID(protocol.MethodLoadPlugin, p.ID); err != nil {
		return nil, err
	}
	offers, err := s.pm.LoadPlugin(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	return s.checkOffers(protocol.MethodLoadPlugin, offers)
}

func (s *server) fetch(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.FetchParams
	if err := decode(protocol.MethodFetch, raw, &p); err != nil {
		return nil, err
	}
	if p.Update == "" {
		p.Update = protocol.UpdateNone
	}
	if !p.Update.Valid() {
		return nil, invalidParams(protocol.MethodFetch, "update must be %q, %q or %q, not %q",
			protocol.UpdateNone, protocol.UpdateCheck, protocol.UpdateFetch, p.Update)
	}
	if p.ID.Version == "" {
		p.ID.Version = protocol.AnyVersion
	}
	if err := s.checkID(protocol.MethodFetch, p.ID); err != nil {
		return nil, err
	}
	res, err := s.pm.Fetch(ctx, p.ID, p.Update)
	if err != nil {
		return nil, err
	}
	if err := s.checkMinted(protocol.MethodFetch, res.ID); err != nil {
		return nil, err
	}
	return res, nil
}

func (s *server) listDeps(ctx context.Context, raw json.RawMessage) (any, error) {
	dl, ok := s.pm.(DepLister)
	if !ok {
		return []protocol.PackageID{}, nil
	}
	if rl, ok := dl.(RawDepLister); ok {
		res, ok, err := rl.ListDepsRaw(ctx)
		switch {
		case err != nil:
			return nil, err
		case ok:
			return s.rawResult(ctx, protocol.MethodListDeps, res, false)
		}
	}
	deps, err := dl.ListDeps(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.checkMinted(protocol.MethodListDeps, deps...); err != nil {
		return nil, err
	}
	if deps == nil {
		deps = []protocol.PackageID{}
	}
	return deps, nil
}

func (s *server) search(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.SearchParams
	if err := decode(protocol.MethodSearch, raw, &p); err != nil {
		return nil, err
	}
	sr, ok := s.pm.(Searcher)
	if !ok {
		return []protocol.SearchHit{}, nil
	}
	hits, err := sr.Search(ctx, p.Query)
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		if err := s.checkMinted(protocol.MethodSearch, h.ID); err != nil {
			return nil, err
		}
	}
	if hits == nil {
		hits = []protocol.SearchHit{}
	}
	return hits, nil
}

func (s *server) refresh(ctx context.Context, raw json.RawMessage) (any, error) {
	var p protocol.RefreshParams
	if err := decode(protocol.MethodRefresh, raw, &p); err != nil {
		return nil, err
	}
	if p.Update == "" {
		p.Update = protocol.UpdateCheck
	}
	if !p.Update.Valid() {
		return nil, invalidParams(protocol.MethodRefresh, "update must be %q, %q or %q, not %q",
			protocol.UpdateNone, protocol.UpdateCheck, protocol.UpdateFetch, p.Update)
	}
	rf, ok := s.pm.(Refresher)
	if !ok {
		return protocol.RefreshResult{}, nil
	}
	done, err := rf.Refresh(ctx, p.Update, p.Force)
	if err != nil {
		return nil, err
	}
	return protocol.RefreshResult{Refreshed: done}, nil
}

func (s *server) workspace(ctx context.Context, raw json.RawMessage) (any, error) {
	wr, ok := s.pm.(WorkspaceReporter)
	if !ok {
		return protocol.WorkspaceResult{Members: []protocol.WorkspaceMember{}}, nil
	}
	res, err := wr.Workspace(ctx)
	if err != nil {
		return nil, err
	}
	if res.Members == nil {
		res.Members = []protocol.WorkspaceMember{}
	}
	return res, nil
}
