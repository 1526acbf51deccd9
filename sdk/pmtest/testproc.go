package pmtest

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// DefaultProcTimeout is how long a Proc waits for one response, and for the
// PM to exit once its input is closed, unless ProcTimeout says otherwise.
const DefaultProcTimeout = 90 * time.Second

// Proc is a PM process that a test drives over its stdin and stdout: it
// writes one JSON-RPC request per line and reads the response lines back,
// keeping each line as written, so that a PM's own tests can check what the
// conformance suite cannot (its answers for its ecosystem, its behaviour when
// killed or when its cache disappears, what it prints).
//
// Start one with StartProc. Send fails the test when the request cannot be
// written, and the methods that wait for a response (Wait, Call, Next) when
// the PM does not answer in time, closes its output or writes a line that is
// not JSON; each failure kills the PM and reports its stderr. Like t.Fatal,
// these methods must be called from the goroutine running the test.
type Proc struct {
	t            testing.TB
	hp           *host.Process
	timeout      time.Duration
	closeTimeout time.Duration

	wmu    sync.Mutex // serializes Send, for its ids
	nextID int

	mu      sync.Mutex
	lines   [][]byte   // read and not yet taken
	held    []Response // taken by Wait while it looked for another id
	readErr error      // why reading stopped, once it has
	arrived chan struct{}

	stdout, stderr LogBuffer
	readDone       chan struct{}
}

// Response is one response line read from a Proc.
type Response struct {
	// ID is the id of the request answered; 0 for a null id.
	ID int
	// Result is the result as the PM wrote it; nil for an error response.
	Result json.RawMessage
	// Error is the PM's error; nil for a success.
	Error *protocol.Error
	// Raw is the whole line as the PM wrote it, without its newline.
	Raw string
}

// Code returns the error code of the response, 0 for a success.
func (r Response) Code() protocol.Code {
	if r.Error == nil {
		return 0
	}
	return r.Error.Code
}

// ProcOption adjusts how StartProc runs a PM.
type ProcOption func(*procConfig)

type procConfig struct {
	env          []string
	timeout      time.Duration
	closeTimeout time.Duration
}

// ProcEnv sets the PM's whole process environment to the KEY=VALUE entries
// env, instead of the test's own environment, so that the PM sees nothing
// of the machine's configuration that the test does not give it.
func ProcEnv(env ...string) ProcOption {
	return func(c *procConfig) { c.env = append([]string{}, env...) }
}

// ProcTimeout sets how long the Proc waits for each response and for the
// PM's exit once its input is closed (default DefaultProcTimeout).
func ProcTimeout(d time.Duration) ProcOption {
	return func(c *procConfig) { c.timeout = d }
}

// ProcCloseTimeout sets how long Close waits for the PM to exit once its
// input is closed (default: the ProcTimeout), so that a test of a PM that
// does not exit need not shorten the wait for every response too.
func ProcCloseTimeout(d time.Duration) ProcOption {
	return func(c *procConfig) { c.closeTimeout = d }
}

// StartProc starts the PM bin with args, in workspace as its working
// directory, and initializes it on workspace and cacheDir with the
// initialize env initEnv (nil for none); it fails the test if the PM cannot
// be started or refuses to initialize.
//
// The PM runs in a process group of its own. When the test ends, the PM and
// whatever it started that is still in its group are killed and the PM is
// waited for, so that nothing it runs outlives the test's temporary
// directories.
func StartProc(t testing.TB, bin string, args []string, workspace, cacheDir string, initEnv map[string]string, opts ...ProcOption) *Proc {
	t.Helper()
	cfg := procConfig{timeout: DefaultProcTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	var err error
	if workspace, err = absPath(workspace); err != nil {
		t.Fatalf("pmtest: workspace: %v", err)
	}
	if cacheDir, err = absPath(cacheDir); err != nil {
		t.Fatalf("pmtest: cache dir: %v", err)
	}
	p := &Proc{
		t:            t,
		timeout:      cfg.timeout,
		closeTimeout: cmp.Or(cfg.closeTimeout, cfg.timeout),
		arrived:      make(chan struct{}, 1),
		readDone:     make(chan struct{}),
	}
	p.hp, err = host.StartProcess(host.Spec{Command: bin, Args: args}, host.ProcessOptions{
		Dir:         workspace,
		Environ:     cfg.env, // nil: the test's own
		StderrTo:    &p.stderr,
		StdoutTo:    &p.stdout,
		StderrLines: 1,
	})
	if err != nil {
		t.Fatalf("pmtest: starting %s: %v", bin, err)
	}
	go p.read()
	t.Cleanup(func() {
		p.hp.Kill()
		p.reap()
	})
	if initEnv == nil {
		initEnv = map[string]string{}
	}
	r := p.Call(protocol.MethodInitialize, protocol.InitializeParams{
		ProtocolVersion: protocol.Version, Workspace: workspace, CacheDir: cacheDir, Env: initEnv,
	})
	if r.Error != nil {
		p.fatalf("pmtest: initialize: %s", r.Raw)
	}
	return p
}

// absPath makes a non-empty path absolute.
func absPath(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	return filepath.Abs(path)
}

// read collects the PM's output lines until it ends.
func (p *Proc) read() {
	defer close(p.readDone)
	defer p.hp.CloseOutput()
	for {
		line, err := p.hp.ReadLine()
		p.mu.Lock()
		if err != nil {
			p.readErr = err
		} else {
			p.lines = append(p.lines, line)
		}
		p.mu.Unlock()
		select {
		case p.arrived <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// reap waits for the PM to exit and for its output to be read to the end.
func (p *Proc) reap() {
	p.hp.Stop(host.Timeouts{Drain: time.Second}, nil)
	finishReading(p.readDone, p.hp)
}

// Send writes a request for method with params (left out when nil) and
// returns its id, without waiting for the answer.
func (p *Proc) Send(method string, params any) int {
	p.t.Helper()
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.nextID++
	req := map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method}
	if params != nil {
		req["params"] = params
	}
	line, err := json.Marshal(req)
	if err != nil {
		p.fatalf("pmtest: encoding the %s request: %v", method, err)
	}
	if err := p.hp.WriteLine(line); err != nil {
		p.fatalf("pmtest: writing the %s request: %v", method, err)
	}
	return p.nextID
}

// Wait returns the response to the request id. Responses to other requests
// read meanwhile are kept for the Wait or Next that asks for them.
func (p *Proc) Wait(id int) Response {
	p.t.Helper()
	p.mu.Lock()
	for i, r := range p.held {
		if r.ID == id {
			p.held = append(p.held[:i:i], p.held[i+1:]...)
			p.mu.Unlock()
			return r
		}
	}
	p.mu.Unlock()
	deadline := time.Now().Add(p.timeout)
	for {
		r := p.next(deadline, fmt.Sprintf("response to request %d", id))
		if r.ID == id {
			return r
		}
		p.mu.Lock()
		p.held = append(p.held, r)
		p.mu.Unlock()
	}
}

// Next returns the first response not yet returned, whatever its id.
func (p *Proc) Next() Response {
	p.t.Helper()
	p.mu.Lock()
	if len(p.held) > 0 {
		r := p.held[0]
		p.held = p.held[1:]
		p.mu.Unlock()
		return r
	}
	p.mu.Unlock()
	return p.next(time.Now().Add(p.timeout), "response")
}

// Call sends a request and waits for its response.
func (p *Proc) Call(method string, params any) Response {
	p.t.Helper()
	return p.Wait(p.Send(method, params))
}

// next reads and decodes the next line, waiting until deadline for it.
func (p *Proc) next(deadline time.Time, what string) Response {
	p.t.Helper()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	for {
		line, readErr := p.pop()
		if line != nil {
			return p.decode(line)
		}
		if readErr != nil {
			p.fatalf("pmtest: waiting for %s: %v", what, p.outputEnd(readErr))
		}
		select {
		case <-p.arrived:
		case <-timer.C:
			p.fatalf("pmtest: no %s within %v", what, p.timeout)
		}
	}
}

// pop takes the first line read, or returns nil and why reading stopped
// (nil while it goes on).
func (p *Proc) pop() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.lines) == 0 {
		return nil, p.readErr
	}
	line := p.lines[0]
	p.lines = p.lines[1:]
	return line, nil
}

// outputEnd describes why the PM's output ended, with its exit status once
// it has exited.
func (p *Proc) outputEnd(readErr error) error {
	var tooLong *framing.TooLongError
	if errors.As(readErr, &tooLong) {
		return fmt.Errorf("the PM wrote a line over the limit: %w", readErr)
	}
	if !errors.Is(readErr, io.EOF) {
		return fmt.Errorf("reading the PM's stdout: %w", readErr)
	}
	if waitExit(p.hp, time.Second) {
		return fmt.Errorf("the PM exited (%s)", p.hp.ExitDescription())
	}
	return errors.New("the PM closed its stdout")
}

// decode parses one response line.
func (p *Proc) decode(line []byte) Response {
	p.t.Helper()
	var m struct {
		ID     *int            `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *protocol.Error `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		p.fatalf("pmtest: the PM wrote a line that is not a JSON-RPC response: %q: %v", line, err)
	}
	r := Response{Result: m.Result, Error: m.Error, Raw: string(line)}
	if m.ID != nil {
		r.ID = *m.ID
	}
	return r
}

// fatalf fails the test with the message and the PM's stderr. It kills the
// PM first, which the test's end would do anyway, so that the stderr
// reported is complete up to the failure.
func (p *Proc) fatalf(format string, args ...any) {
	p.t.Helper()
	p.hp.Kill()
	p.reap()
	p.t.Fatalf(format+"\nstderr:\n%s", append(args, p.Stderr())...)
}

// Close closes the PM's input and waits for it to exit, as a host that is
// done with it would. It returns the PM's exit error (nil for exit status
// 0), or an error saying it did not exit in time, in which case it was
// killed. Its output, complete, stays readable with Stdout and Stderr.
func (p *Proc) Close() error {
	byItself := p.hp.Stop(host.Timeouts{Grace: p.closeTimeout, Drain: time.Second}, nil)
	finishReading(p.readDone, p.hp)
	if !byItself {
		return fmt.Errorf("the PM did not exit within %v of its input closing; it was killed", p.closeTimeout)
	}
	return p.hp.ExitErr()
}

// Kill ends the PM with SIGKILL, as a crash would, and waits for it,
// returning its exit error (an *exec.ExitError for the signal). Only the PM
// is killed, not the processes it started: what becomes of them is the PM's
// doing, until the test ends.
func (p *Proc) Kill() error {
	if err := p.hp.KillLeader(); err != nil {
		return err
	}
	err := p.hp.Wait(time.Second)
	finishReading(p.readDone, p.hp)
	return err
}

// Stderr returns everything the PM has written to its stderr so far.
func (p *Proc) Stderr() string { return p.stderr.String() }

// Stdout returns everything the PM has written to its stdout so far, every
// response line included.
func (p *Proc) Stdout() string { return p.stdout.String() }
