// Package host is the host side of the PM protocol: it spawns package-manager
// binaries, performs the initialize handshake, sends requests with per-method
// timeouts, captures their stderr, and shuts them down without leaving
// processes behind. A PM that fails in any way is reported by name and
// contributes nothing; it never takes the caller down with it.
//
// Conn is one running PM; Registry holds several, starts each lazily on first
// need, and dispatches ids to the PM that owns them.
package host

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/creachadair/jrpc2"

	"github.com/symposium-dev/symposium-pm/sdk/jsonfile"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Spec says how to start one PM.
type Spec struct {
	// Name is the name the PM must announce at initialize; empty accepts
	// whatever name it announces.
	Name string
	// Command is the executable: a path, or a name looked up on PATH.
	Command string
	// Args are the command's arguments.
	Args []string
	// Env holds extra KEY=VALUE entries for the PM's process environment.
	// The host never prints them (they may hold tokens); what the PM itself
	// writes on stderr is quoted in errors as is, so a PM must not print
	// its secrets.
	Env []string
	// InProcess, when set, is served in this process (see NewLocal) instead
	// of a command being started; Command, Args and Env are then unused.
	InProcess pmserver.PM
	// ServeOptions are the harness options of an InProcess PM.
	ServeOptions []pmserver.Option
}

// Timeouts bound each method, and the phases of shutdown.
type Timeouts struct {
	Initialize    time.Duration
	ListDeps      time.Duration
	ActivePlugins time.Duration
	LoadPlugin    time.Duration
	Fetch         time.Duration
	Search        time.Duration
	Refresh       time.Duration
	Workspace     time.Duration
	// Grace is how long a PM has to exit after its stdin is closed.
	Grace time.Duration
	// Term is how long it has after SIGTERM, before SIGKILL.
	Term time.Duration
	// Drain is how long, once the PM has exited, the host keeps reading
	// what is left of its stderr. The pipe ends when every process holding
	// it is gone, and a process the PM started outside its process group
	// (setsid) can hold it for as long as it lives: past Drain the host
	// stops reading rather than wait for that.
	Drain time.Duration
}

// DefaultTimeouts are the timeouts used for zero fields of Options.Timeouts.
// The hook-path methods are short; methods that may download are long.
var DefaultTimeouts = Timeouts{
	Initialize:    10 * time.Second,
	ListDeps:      10 * time.Second,
	ActivePlugins: 30 * time.Second,
	LoadPlugin:    5 * time.Minute,
	Fetch:         5 * time.Minute,
	Search:        30 * time.Second,
	Refresh:       5 * time.Minute,
	Workspace:     10 * time.Second,
	Grace:         2 * time.Second,
	Term:          time.Second,
	Drain:         time.Second,
}

// For returns the timeout of method.
func (t Timeouts) For(method string) time.Duration {
	switch method {
	case protocol.MethodInitialize:
		return t.Initialize
	case protocol.MethodListDeps:
		return t.ListDeps
	case protocol.MethodActivePlugins:
		return t.ActivePlugins
	case protocol.MethodLoadPlugin:
		return t.LoadPlugin
	case protocol.MethodFetch:
		return t.Fetch
	case protocol.MethodSearch:
		return t.Search
	case protocol.MethodRefresh:
		return t.Refresh
	case protocol.MethodWorkspace:
		return t.Workspace
	}
	return t.LoadPlugin
}

// withDefaults fills zero fields from DefaultTimeouts.
func (t Timeouts) withDefaults() Timeouts {
	fill := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	d := DefaultTimeouts
	fill(&t.Initialize, d.Initialize)
	fill(&t.ListDeps, d.ListDeps)
	fill(&t.ActivePlugins, d.ActivePlugins)
	fill(&t.LoadPlugin, d.LoadPlugin)
	fill(&t.Fetch, d.Fetch)
	fill(&t.Search, d.Search)
	fill(&t.Refresh, d.Refresh)
	fill(&t.Workspace, d.Workspace)
	fill(&t.Grace, d.Grace)
	fill(&t.Term, d.Term)
	fill(&t.Drain, d.Drain)
	return t
}

// Options are the per-invocation settings every PM connection shares.
type Options struct {
	// Workspace is the absolute workspace path: the PM's working directory and
	// the initialize workspace.
	Workspace string
	// CacheDir is handed to the PM at initialize.
	CacheDir string
	// Env is the initialize env: the authoritative environment for the PM's
	// ecosystem lookups. Like Spec.Env, it is never printed by the host.
	Env map[string]string
	// Timeouts; zero fields take DefaultTimeouts.
	Timeouts Timeouts
	// MaxMessage bounds one response line (default 64 MiB).
	MaxMessage int
	// StderrLines is how many recent stderr lines are kept for messages
	// (default 20).
	StderrLines int
	// Logger receives warnings and, at debug level, the PMs' stderr.
	Logger *slog.Logger
}

// Conn is a running, initialized PM: a JSON-RPC client over a Process.
type Conn struct {
	spec Spec
	opts Options
	log  *slog.Logger
	info protocol.InitializeResult
	// initDiags are the diagnostics the PM sent while answering
	// initialize (see InitializeDiagnostics).
	initDiags []protocol.Diagnostic
	proc      *Process
	client    *jrpc2.Client
	ch        *clientChannel

	closeMu  sync.Mutex
	closed   bool
	closeErr error
}

// Start spawns the PM described by spec and performs the initialize handshake
// within opts.Timeouts.Initialize. It fails, leaving no process behind, when
// the PM cannot be started, does not answer in time, answers with a protocol
// version other than protocol.Version, or announces a name other than
// spec.Name.
func Start(ctx context.Context, spec Spec, opts Options) (*Conn, error) {
	opts.Timeouts = opts.Timeouts.withDefaults()
	if opts.StderrLines <= 0 {
		opts.StderrLines = 20
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Env == nil {
		opts.Env = map[string]string{}
	}
	if spec.InProcess != nil && spec.Command == "" {
		spec.Command = "in-process PM"
	}
	c := &Conn{
		spec: spec,
		opts: opts,
		log:  opts.Logger.With("pm", cmp.Or(spec.Name, spec.Command)),
	}
	proc, err := StartProcess(spec, ProcessOptions{
		Dir:         opts.Workspace,
		MaxMessage:  opts.MaxMessage,
		StderrLines: opts.StderrLines,
		Logger:      c.log,
	})
	if err != nil {
		return nil, &Error{PM: cmp.Or(spec.Name, spec.Command), Method: "start", Err: err}
	}
	c.proc = proc
	c.ch = newClientChannel(proc)
	c.client = jrpc2.NewClient(c.ch, nil)
	if err := c.handshake(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// NewLocal serves pm in this process, over pipes standing for its stdin,
// stdout and stderr, with the harness of pmserver.Serve and serveOpts, and
// performs the initialize handshake as Start does. The Conn behaves as one
// to a PM binary, without a binary: it is how the host is tested, and how a
// PM author can try a PM through the host. Closing it ends the PM's input;
// a PM that ignores its context's cancellation keeps its goroutines.
func NewLocal(ctx context.Context, pm pmserver.PM, opts Options, serveOpts ...pmserver.Option) (*Conn, error) {
	return Start(ctx, Spec{InProcess: pm, ServeOptions: serveOpts}, opts)
}

func (c *Conn) handshake(ctx context.Context) error {
	params := protocol.InitializeParams{
		ProtocolVersion: protocol.Version,
		Workspace:       c.opts.Workspace,
		CacheDir:        c.opts.CacheDir,
		Env:             c.opts.Env,
	}
	var res protocol.InitializeResult
	if err := c.callDiag(ctx, protocol.MethodInitialize, params, &res, &c.initDiags); err != nil {
		return err
	}
	c.info = res
	switch {
	case res.ProtocolVersion != protocol.Version:
		return c.errorf(protocol.MethodInitialize, "speaks protocol version %d; this host knows only version %d, so its plugins are left out",
			res.ProtocolVersion, protocol.Version)
	case res.Name == "":
		return c.errorf(protocol.MethodInitialize, "announced no name")
	case c.spec.Name == "":
		c.spec.Name = res.Name
		c.log = c.log.With("pm", res.Name)
	case res.Name != c.spec.Name:
		return c.errorf(protocol.MethodInitialize, "announced itself as %q but is configured as %q", res.Name, c.spec.Name)
	}
	return nil
}

// Name is the PM's name.
func (c *Conn) Name() string { return c.spec.Name }

// Info is the PM's initialize result.
func (c *Conn) Info() protocol.InitializeResult { return c.info }

// InitializeDiagnostics returns the diagnostics the PM sent while
// answering initialize (a configuration file it could not read, say),
// checked as CallDiagnostics checks a request's. The Registry reports
// them with the first call that uses the PM.
func (c *Conn) InitializeDiagnostics() []protocol.Diagnostic { return c.initDiags }

// Has reports whether the PM announced capability cap.
func (c *Conn) Has(cap string) bool { return slices.Contains(c.info.Capabilities, cap) }

// Stderr returns the PM's most recent stderr lines.
func (c *Conn) Stderr() []string { return c.proc.Stderr() }

// PID is the PM's process id; 0 for an in-process PM.
func (c *Conn) PID() int { return c.proc.PID() }

// Call sends one request and decodes its result into result, within the
// method's timeout. Errors are *Error; one carrying the PM's own answer wraps
// a *protocol.Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result)
}

func (c *Conn) call(ctx context.Context, method string, params, result any) error {
	return c.callDiag(ctx, method, params, result, nil)
}

// callDiag is call, storing the request's diagnostics in diags when not nil
// (see CallDiagnostics).
func (c *Conn) callDiag(ctx context.Context, method string, params, result any, diags *[]protocol.Diagnostic) error {
	timeout := c.opts.Timeouts.For(method)
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var raw json.RawMessage
	decode := json.Unmarshal
	rsp, err := c.client.Call(cctx, method, params)
	if err == nil {
		// Collected even when not wanted, so that they are not kept.
		got := c.ch.diags.collect(rsp.ID())
		if diags != nil {
			*diags = got
		}
		if r, ok := c.ch.takeResult(rsp.ID()); ok {
			raw, decode = r, decodeChecked // checked by the channel
		} else {
			err = rsp.UnmarshalResult(&raw)
		}
	}
	if err == nil {
		if result != nil {
			if err := decode(raw, result); err != nil {
				return c.errorf(method, "answered with a result of the wrong shape: %v", jsonfile.ExplainValue(raw, err))
			}
		}
		return nil
	}
	// Work out why the call failed: a broken connection, our deadline, the
	// caller's context, or the PM's own error answer, in that order of blame.
	if reason := c.broken(); reason != nil {
		return c.wrap(method, reason)
	}
	if ctx.Err() != nil {
		return c.wrap(method, ctx.Err())
	}
	if cctx.Err() != nil {
		select {
		case <-c.proc.Exited(): // it died as the deadline passed: say so
			return c.errorf(method, "the PM exited (%s) without answering", c.proc.ExitDescription())
		default:
		}
		return c.wrap(method, fmt.Errorf("%w within %v", ErrNoAnswer, timeout))
	}
	var je *jrpc2.Error
	if errors.As(err, &je) {
		return c.wrap(method, &protocol.Error{Code: protocol.Code(je.Code), Message: je.Message, Data: je.Data})
	}
	// A PM that died between calls fails the write of the next request
	// (os/exec closes its stdin once it is reaped) before its output's end
	// is noticed: say that it exited rather than how the write failed.
	if !c.proc.wait(exitSettle) {
		return c.wrap(method, err)
	}
	return c.errorf(method, "the PM exited (%s) without answering (%v)", c.proc.ExitDescription(), err)
}

// ErrNoAnswer is wrapped by the error of a call the PM did not answer within
// its timeout.
var ErrNoAnswer = errors.New("no answer")

// Unusable reports whether the PM can no longer answer: its output is
// broken or closed, or it has exited.
func (c *Conn) Unusable() bool {
	if c.ch.failure() != nil {
		return true
	}
	return c.proc.wait(0)
}

// broken returns why the connection is unusable, or nil. A connection whose
// output ended is given a moment to report its exit status.
func (c *Conn) broken() error {
	reason := c.ch.failure()
	if reason == nil {
		return nil
	}
	if c.proc.wait(exitSettle) {
		if errors.Is(reason, errOutputClosed) {
			return fmt.Errorf("the PM exited (%s) without answering", c.proc.ExitDescription())
		}
		if c.proc.ExitErr() != nil {
			return fmt.Errorf("%w; the PM exited (%s)", reason, c.proc.ExitDescription())
		}
	}
	return reason
}

// exitSettle is how long a PM whose output broke is given to report its
// exit, so that the error can say how it exited.
const exitSettle = 200 * time.Millisecond

func (c *Conn) wrap(method string, err error) *Error {
	// A PM that died may have said why on stderr just before: read it.
	c.proc.SettleStderr(stderrSettle)
	return &Error{PM: cmp.Or(c.spec.Name, c.spec.Command), Method: method, Err: err, Stderr: c.Stderr()}
}

// stderrSettle bounds how long an error about a PM that has exited waits
// for the end of its stderr (see Process.SettleStderr).
const stderrSettle = 500 * time.Millisecond

func (c *Conn) errorf(method, format string, args ...any) *Error {
	return c.wrap(method, fmt.Errorf(format, args...))
}

// Close shuts the PM down: it closes the PM's stdin, waits the grace period,
// sends SIGTERM to the PM's process group, waits again, then SIGKILLs the
// group. It returns once the process has exited and its output is drained,
// or, when a process the PM started outside its group still holds the
// output open, once the Drain timeout has passed: Close never waits on a
// pipe such a process holds. Close is idempotent; it reports how the
// process ended when that was not a clean exit.
func (c *Conn) Close() error {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed {
		return c.closeErr
	}
	c.closed = true
	c.proc.Stop(c.opts.Timeouts, c.log)
	// Closing the read end of stdout ends the reading of responses whoever
	// else holds the write end.
	c.ch.Close()
	c.client.Close()
	if c.proc.ExitErr() != nil {
		c.closeErr = c.errorf("shutdown", "%s", c.proc.ExitDescription())
	}
	return c.closeErr
}

// Error is a failure of one PM call: which PM, which method, why, and the
// PM's last stderr lines.
type Error struct {
	PM     string
	Method string
	Err    error
	Stderr []string
}

func (e *Error) Error() string {
	cause := fmt.Sprint(e.Err)
	msg := "pm " + e.PM + ": " + cause
	if !strings.HasPrefix(cause, e.Method+": ") {
		// A PM built on the SDK names the method itself (as in
		// "active_plugins: invalid params: …"); say it once.
		msg = fmt.Sprintf("pm %s: %s: %s", e.PM, e.Method, cause)
	}
	if len(e.Stderr) > 0 {
		last := e.Stderr[max(0, len(e.Stderr)-5):]
		msg += "; last stderr lines:"
		for _, l := range last {
			msg += "\n    " + l
		}
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// LookPathNextTo finds the PM binary name first in dir (the host binary's
// directory), then on PATH.
func LookPathNextTo(dir, name string) (string, error) {
	if dir != "" {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return exec.LookPath(name)
}
