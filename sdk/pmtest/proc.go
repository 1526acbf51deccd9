package pmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// proc is one run of the PM under test, spoken to line by line (through
// the host's host.Process) so that the checks can send what a well-behaved
// host never would and judge every line the PM answers.
type proc struct {
	cfg *config
	hp  *host.Process

	mu       sync.Mutex
	pending  map[string]chan reply
	nulls    []reply // error responses carrying a null id
	nullSig  chan struct{}
	broken   error
	brokenCh chan struct{}
	sawEOF   bool // the PM's output ended: it is probably exiting
	nextID   int

	stderr   *tail
	readDone chan struct{}
}

// reply is one response: a result or the PM's error.
type reply struct {
	ID     json.RawMessage
	Result json.RawMessage
	Err    *protocol.Error
}

// start spawns the PM with extraEnv added to its process environment.
func start(cfg *config, extraEnv []string) (*proc, error) {
	p := &proc{
		cfg:      cfg,
		pending:  map[string]chan reply{},
		nullSig:  make(chan struct{}, 1),
		brokenCh: make(chan struct{}),
		stderr:   &tail{},
		readDone: make(chan struct{}),
	}
	hp, err := startProcess(cfg, extraEnv, p.stderr, nil)
	if err != nil {
		return nil, err
	}
	p.hp = hp
	go p.read()
	return p, nil
}

// startProcess starts the PM of cfg, with extraEnv added to its process
// environment, copying its stderr to stderr and what is read of its stdout
// to stdout (when not nil).
func startProcess(cfg *config, extraEnv []string, stderr, stdout io.Writer) (*host.Process, error) {
	return host.StartProcess(host.Spec{Command: cfg.command[0], Args: cfg.command[1:]}, host.ProcessOptions{
		Dir:        cfg.workspace,
		Environ:    append(append(os.Environ(), cfg.processEnv...), extraEnv...),
		MaxMessage: cfg.maxMessage,
		StderrTo:   stderr,
		StdoutTo:   stdout,
	})
}

// read parses the PM's output until it ends or breaks the protocol.
func (p *proc) read() {
	defer close(p.readDone)
	defer p.hp.CloseOutput()
	for {
		line, err := p.hp.ReadLine()
		var tooLong *framing.TooLongError
		switch {
		case errors.As(err, &tooLong):
			p.fail(fmt.Errorf("the PM wrote a line of %d bytes on stdout, over the limit of %d bytes", tooLong.Size, tooLong.Max))
			return
		case errors.Is(err, io.EOF):
			p.mu.Lock()
			p.sawEOF = true
			p.mu.Unlock()
			p.fail(errOutputClosed)
			return
		case err != nil:
			p.fail(fmt.Errorf("reading the PM's stdout: %w", err))
			return
		}
		if err := p.deliver(line, p.hp.Unterminated()); err != nil {
			p.mu.Lock()
			p.sawEOF = p.hp.Unterminated()
			p.mu.Unlock()
			p.fail(err)
			return
		}
	}
}

var errOutputClosed = errors.New("the PM closed its stdout")

// deliver validates one response line and hands it to its caller.
func (p *proc) deliver(line []byte, unterminated bool) error {
	var msg struct {
		JSONRPC *string          `json:"jsonrpc"`
		ID      json.RawMessage  `json:"id"`
		Method  *string          `json:"method"`
		Result  json.RawMessage  `json:"result"`
		Error   *json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(line, &msg); err != nil {
		if unterminated {
			return fmt.Errorf("the PM's output ended in the middle of a message: %s", quote(line))
		}
		return fmt.Errorf("the PM wrote a line that is not a JSON-RPC message on stdout: %s", quote(line))
	}
	p.cfg.schema.received(p, line)
	switch {
	case msg.JSONRPC == nil || *msg.JSONRPC != "2.0":
		return fmt.Errorf(`the PM wrote a message without "jsonrpc":"2.0": %s`, quote(line))
	case msg.Method != nil && *msg.Method == protocol.MethodDiagnostic && msg.ID == nil:
		return nil // a diagnostic notification: the schema check validates it
	case msg.Method != nil && msg.ID == nil:
		// A notification of a method the host does not know: a host
		// ignores it, never failing the connection over it
		// (docs/protocol.md §4.2).
		return nil
	case msg.Method != nil:
		// (The wording up to "to the host" is pinned by host/cli's tests.)
		return fmt.Errorf("the PM sent a request or notification (method %q) to the host, with an id: a request, and a host takes none (it ignores only notifications, which have no id): %s", *msg.Method, quote(line))
	case msg.Result != nil && msg.Error != nil:
		return fmt.Errorf("the PM wrote a response with both a result and an error: %s", quote(line))
	case msg.Result == nil && msg.Error == nil:
		return fmt.Errorf("the PM wrote a response with neither a result nor an error: %s", quote(line))
	case len(msg.ID) == 0:
		return fmt.Errorf("the PM wrote a response without an id: %s", quote(line))
	}
	rep := reply{ID: msg.ID, Result: msg.Result}
	if msg.Error != nil {
		var e struct {
			Code    *int            `json:"code"`
			Message *string         `json:"message"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal(*msg.Error, &e); err != nil || e.Code == nil || e.Message == nil {
			return fmt.Errorf("the PM wrote an error that is not a JSON-RPC error object with an integer code and a message: %s", quote(line))
		}
		rep.Err = &protocol.Error{Code: protocol.Code(*e.Code), Message: *e.Message, Data: e.Data}
	}
	key := framing.IDKey(msg.ID)
	p.mu.Lock()
	defer p.mu.Unlock()
	if key == "" {
		if rep.Err == nil {
			return fmt.Errorf("the PM wrote a result with a null id: %s", quote(line))
		}
		p.nulls = append(p.nulls, rep)
		select {
		case p.nullSig <- struct{}{}:
		default:
		}
		return nil
	}
	ch, ok := p.pending[key]
	if !ok {
		return fmt.Errorf("the PM answered id %s, which is not a request in flight (a duplicate answer, or an id the host never sent): %s", key, quote(line))
	}
	delete(p.pending, key)
	ch <- rep
	return nil
}

// fail marks the connection broken with reason, once.
func (p *proc) fail(reason error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.broken == nil {
		p.broken = reason
		close(p.brokenCh)
	}
}

// brokenReason explains why the connection broke, with the PM's exit status
// when it has exited.
func (p *proc) brokenReason(what string) error {
	p.mu.Lock()
	reason, eof := p.broken, p.sawEOF
	p.mu.Unlock()
	settle := time.Duration(0)
	if eof {
		// Give a PM whose output ended a moment to report its exit status.
		settle = exitSettle
	}
	exited := waitExit(p.hp, settle)
	switch {
	case errors.Is(reason, errOutputClosed) && exited:
		return p.withStderr(fmt.Errorf("the PM exited (%s) without answering %s", p.hp.ExitDescription(), what))
	case errors.Is(reason, errOutputClosed):
		return p.withStderr(fmt.Errorf("the PM closed its stdout without answering %s", what))
	case exited && p.hp.ExitErr() != nil:
		return p.withStderr(fmt.Errorf("%w; the PM exited (%s)", reason, p.hp.ExitDescription()))
	}
	return p.withStderr(reason)
}

// withStderr appends the PM's last stderr lines to err's message.
func (p *proc) withStderr(err error) error {
	p.hp.SettleStderr(exitSettle)
	last := p.stderr.lastLines(3)
	if len(last) == 0 {
		return err
	}
	return fmt.Errorf("%w (last stderr: %s)", err, strings.Join(last, " | "))
}

// exitSettle is how long a PM whose output ended is given to exit, so that
// a message can say how it exited.
const exitSettle = 500 * time.Millisecond

// waitExit waits up to d for hp to exit and reports whether it has.
func waitExit(hp *host.Process, d time.Duration) bool {
	select {
	case <-hp.Exited():
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-hp.Exited():
		return true
	case <-t.C:
		return false
	}
}

// request encodes one request line.
func request(id any, method string, params any) []byte {
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	b, err := json.Marshal(m)
	if err != nil {
		panic(err) // the checks only send values that marshal
	}
	return b
}

// write sends raw lines to the PM.
func (p *proc) write(lines ...[]byte) error {
	var buf bytes.Buffer
	for _, l := range lines {
		p.cfg.schema.sent(p, l)
		buf.Write(l)
		buf.WriteByte('\n')
	}
	if err := p.hp.Write(buf.Bytes()); err != nil {
		return p.brokenOr(err)
	}
	return nil
}

// brokenOr returns the broken-connection reason when there is one, else err.
func (p *proc) brokenOr(err error) error {
	select {
	case <-p.brokenCh:
		return p.brokenReason("the request")
	default:
		return err
	}
}

// expect registers a request id whose answer the caller will wait for.
func (p *proc) expect(id any) (string, chan reply) {
	b, _ := json.Marshal(id)
	key := framing.IDKey(b)
	ch := make(chan reply, 1)
	p.mu.Lock()
	p.pending[key] = ch
	p.mu.Unlock()
	return key, ch
}

// newID returns a fresh numeric request id.
func (p *proc) newID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.nextID++
	return p.nextID
}

// call sends one request and waits for its answer within the method's
// timeout. The error is a transport failure; the PM's own error answer is in
// the reply.
func (p *proc) call(ctx context.Context, method string, params any) (reply, error) {
	id := p.newID()
	_, ch := p.expect(id)
	if err := p.write(request(id, method, params)); err != nil {
		// A PM that exited breaks the pipe before its output's end is read:
		// wait for that, to report the exit against this method.
		select {
		case <-p.brokenCh:
			return reply{}, p.brokenReason(method)
		case <-time.After(time.Second):
			return reply{}, err
		}
	}
	return p.wait(ctx, method, ch)
}

// wait waits for the reply on ch to a request of method.
func (p *proc) wait(ctx context.Context, method string, ch chan reply) (reply, error) {
	timeout := p.cfg.timeoutFor(method)
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case r := <-ch:
		return r, nil
	case <-p.brokenCh:
		select {
		case r := <-ch:
			return r, nil
		default:
		}
		return reply{}, p.brokenReason(method)
	case <-timer.C:
		return reply{}, p.withStderr(fmt.Errorf("no answer to %s within %v", method, timeout))
	case <-ctx.Done():
		return reply{}, ctx.Err()
	}
}

// waitNull waits for an error response with a null id.
func (p *proc) waitNull(ctx context.Context, what string) (reply, error) {
	timeout := p.cfg.timeout
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		p.mu.Lock()
		if len(p.nulls) > 0 {
			r := p.nulls[0]
			p.nulls = p.nulls[1:]
			p.mu.Unlock()
			return r, nil
		}
		p.mu.Unlock()
		select {
		case <-p.nullSig:
		case <-p.brokenCh:
			return reply{}, p.brokenReason(what)
		case <-timer.C:
			return reply{}, p.withStderr(fmt.Errorf("no answer to %s within %v", what, timeout))
		case <-ctx.Done():
			return reply{}, ctx.Err()
		}
	}
}

// initialize performs the handshake with the options' workspace, cache and
// env, plus extra env entries.
func (p *proc) initialize(ctx context.Context, version int, extraEnv map[string]string) (protocol.InitializeResult, *protocol.Error, error) {
	env := map[string]string{}
	for k, v := range p.cfg.env {
		env[k] = v
	}
	for k, v := range extraEnv {
		env[k] = v
	}
	params := protocol.InitializeParams{ProtocolVersion: version, Workspace: p.cfg.workspace, CacheDir: p.cfg.cacheDir, Env: env}
	var res protocol.InitializeResult
	r, err := p.call(ctx, protocol.MethodInitialize, params)
	if err != nil || r.Err != nil {
		return res, r.Err, err
	}
	if err := strictDecode(r.Result, &res); err != nil {
		return res, nil, fmt.Errorf("initialize answered with a result of the wrong shape: %v: %s", err, quote(r.Result))
	}
	return res, nil, nil
}

// closeInput closes the PM's stdin and waits up to grace for it to exit,
// then kills its process group. It reports whether it exited by itself.
func (p *proc) closeInput(grace time.Duration) bool {
	byItself := p.hp.Stop(host.Timeouts{Grace: grace, Drain: time.Second}, nil)
	if !byItself {
		finishReading(p.readDone, p.hp)
	}
	return byItself
}

// kill ends the PM and its process group at once and waits for it. A
// descendant that escaped the group and holds the PM's stdout open does not
// keep it waiting: the output is then closed from this end.
func (p *proc) kill() {
	p.hp.Stop(host.Timeouts{Drain: time.Second}, nil)
	finishReading(p.readDone, p.hp)
}

// finishReading waits for the reader of hp's stdout to see its end and
// signal done. A process the PM started, outside its group, may hold the
// PM's stdout open after the PM is gone: after two seconds the output is
// closed from this end instead.
func finishReading(done <-chan struct{}, hp *host.Process) {
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		hp.CloseOutput()
		<-done
	}
}

// quote renders a line for a message, cut to a readable length.
func quote(b []byte) string {
	const n = 160
	if len(b) <= n {
		return fmt.Sprintf("%q", b)
	}
	return fmt.Sprintf("%q…", b[:n])
}

// tail counts what the PM writes to stderr and keeps its end.
type tail struct {
	mu    sync.Mutex
	total int64
	buf   []byte
}

const tailKeep = 4 << 10

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(b))
	t.buf = append(t.buf, b...)
	if len(t.buf) > 2*tailKeep {
		t.buf = append(t.buf[:0:0], t.buf[len(t.buf)-tailKeep:]...)
	}
	return len(b), nil
}

// size is the number of bytes written so far.
func (t *tail) size() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.total
}

// lastLines returns up to n of the last non-blank lines, each cut short.
func (t *tail) lastLines(n int) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, l := range strings.Split(string(t.buf), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 200 {
				l = l[:200] + "…"
			}
			out = append(out, l)
		}
	}
	return out[max(0, len(out)-n):]
}
