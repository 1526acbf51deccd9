package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/procgroup"
)

// Process is one running PM spoken to line by line: the layer under Conn.
// It starts the PM (a binary in a process group of its own, or a pmserver.PM
// served in this process over pipes), writes lines to its stdin, reads the
// lines of its stdout with a bound on their size, keeps its recent stderr
// lines, and stops it in phases. It knows nothing of JSON-RPC beyond the
// framing, so that a conformance kit can send what a well-behaved host never
// would and see exactly what the PM answers; a host uses Conn.
//
// WriteLine may be called from several goroutines; ReadLine from one at a
// time.
type Process struct {
	cmd    *exec.Cmd          // nil for an in-process PM
	cancel context.CancelFunc // stops an in-process PM's harness
	inR    *io.PipeReader     // an in-process PM's end of its stdin

	wmu   sync.Mutex
	stdin io.WriteCloser

	out io.ReadCloser // the read end of the PM's stdout
	r   *framing.Reader

	errR    io.ReadCloser // the read end of the PM's stderr
	stderr  *ring
	readers sync.WaitGroup // the stderr reader

	exited  chan struct{} // closed once the PM has exited
	waitErr error         // how it exited, once exited is closed
}

// ProcessOptions say how StartProcess runs a PM.
type ProcessOptions struct {
	// Dir is the PM's working directory (default: the host's).
	Dir string
	// Environ, when not nil, is the PM's whole process environment; by
	// default it is the host's environment plus Spec.Env.
	Environ []string
	// MaxMessage bounds one line of the PM's stdout (default 64 MiB).
	MaxMessage int
	// StderrLines is how many recent stderr lines Stderr keeps (default 20).
	StderrLines int
	// StderrTo, when set, also receives every byte the PM writes to stderr.
	StderrTo io.Writer
	// StdoutTo, when set, also receives every byte read from the PM's
	// stdout, as written, lines over the bound and partial lines included.
	StdoutTo io.Writer
	// Logger receives, at debug level, the PM's stderr lines.
	Logger *slog.Logger
}

func (o ProcessOptions) withDefaults() ProcessOptions {
	if o.StderrLines <= 0 {
		o.StderrLines = 20
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// StartProcess starts the PM spec describes: spec.InProcess when set, else
// spec.Command. It does not speak to it.
func StartProcess(spec Spec, opts ProcessOptions) (*Process, error) {
	opts = opts.withDefaults()
	if spec.InProcess != nil {
		return startLocal(spec.InProcess, spec.ServeOptions, opts), nil
	}
	path, err := exec.LookPath(spec.Command)
	if err != nil {
		return nil, fmt.Errorf("cannot find PM command %q: %w", spec.Command, err)
	}
	cmd := exec.Command(path, spec.Args...)
	cmd.Dir = opts.Dir
	cmd.Env = opts.Environ
	if cmd.Env == nil {
		cmd.Env = append(os.Environ(), spec.Env...)
	}
	procgroup.Set(cmd)

	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stdin.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		stdin.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	if err := cmd.Start(); err != nil {
		stdin.Close()
		outR.Close()
		outW.Close()
		errR.Close()
		errW.Close()
		return nil, fmt.Errorf("starting %s: %w", path, err)
	}
	outW.Close()
	errW.Close()
	p := newProcess(stdin, outR, errR, opts)
	p.cmd = cmd
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// startLocal serves pm on a goroutine of this process, over pipes standing
// for its stdin, stdout and stderr (where the harness logs).
func startLocal(pm pmserver.PM, serveOpts []pmserver.Option, opts ProcessOptions) *Process {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	p := newProcess(inW, outR, errR, opts)
	p.cancel, p.inR = cancel, inR
	logger := slog.New(slog.NewTextHandler(errW, &slog.HandlerOptions{Level: slog.LevelDebug}))
	go func() {
		err := pmserver.Serve(ctx, pm, inR, outW, append([]pmserver.Option{pmserver.WithLogger(logger)}, serveOpts...)...)
		inR.Close()
		outW.Close()
		errW.Close()
		p.waitErr = err
		close(p.exited)
	}()
	return p
}

func newProcess(stdin io.WriteCloser, out, errR io.ReadCloser, opts ProcessOptions) *Process {
	var rd io.Reader = out
	if opts.StdoutTo != nil {
		rd = io.TeeReader(out, opts.StdoutTo)
	}
	p := &Process{
		stdin:  stdin,
		out:    out,
		r:      framing.NewReader(rd, opts.MaxMessage),
		errR:   errR,
		stderr: newRing(opts.StderrLines),
		exited: make(chan struct{}),
	}
	var src io.Reader = errR
	if opts.StderrTo != nil {
		src = io.TeeReader(errR, opts.StderrTo)
	}
	log := opts.Logger
	p.readers.Add(1)
	go func() {
		defer p.readers.Done()
		p.stderr.drain(src, func(line string) { log.Debug("pm stderr", "line", line) })
		errR.Close()
	}()
	return p
}

// WriteLine writes line and a newline to the PM's stdin in one write.
func (p *Process) WriteLine(line []byte) error {
	buf := make([]byte, 0, len(line)+1)
	return p.Write(append(append(buf, line...), '\n'))
}

// Write writes b to the PM's stdin as is: several lines, or a part of one.
func (p *Process) Write(b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if _, err := p.stdin.Write(b); err != nil {
		return fmt.Errorf("writing to the PM: %w", err)
	}
	return nil
}

// CloseInput closes the PM's stdin: the end of its input.
func (p *Process) CloseInput() error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.stdin.Close()
}

// ReadLine returns the next non-blank line of the PM's stdout without its
// newline. A line over the bound is consumed and reported as
// *framing.TooLongError, and reading may go on; the end of the output is
// io.EOF.
func (p *Process) ReadLine() ([]byte, error) { return p.r.Next() }

// Unterminated reports whether the last line ReadLine returned was cut
// short by the end of the output rather than ended by a newline.
func (p *Process) Unterminated() bool { return p.r.Unterminated() }

// CloseOutput closes the reading end of the PM's stdout, which ends a
// pending ReadLine whoever else holds the writing end.
func (p *Process) CloseOutput() error { return p.out.Close() }

// Exited is closed once the PM has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// ExitErr is how the PM exited, once Exited is closed: nil for exit status
// 0, an *exec.ExitError otherwise (for an in-process PM, the harness's
// error).
func (p *Process) ExitErr() error {
	<-p.exited
	return p.waitErr
}

// ExitDescription says how the PM exited, once Exited is closed: "exit
// status 3", "signal: killed".
func (p *Process) ExitDescription() string {
	err := p.ExitErr()
	if p.cmd == nil {
		if err == nil {
			return "its harness returned"
		}
		return "its harness failed: " + err.Error()
	}
	return ExitDescription(err)
}

// ExitDescription describes the error of exec.Cmd.Wait: "exit status 0" for
// nil, the process state ("exit status 3", "signal: killed") for an
// *exec.ExitError, the error's text otherwise.
func ExitDescription(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// PID is the PM's process id; 0 for an in-process PM.
func (p *Process) PID() int {
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Stderr returns the PM's most recent stderr lines, oldest first.
func (p *Process) Stderr() []string { return p.stderr.lines() }

// Kill kills the PM and its process group at once (an in-process PM's
// harness is cancelled and its input and output closed). It does not wait.
func (p *Process) Kill() {
	if p.cmd == nil {
		p.cancel()
		// Closed from the PM's end, so that a write blocked on the pipe
		// fails at once.
		p.inR.CloseWithError(errKilled)
		select {
		case <-p.exited: // its output has ended by itself: left to be read
		default:
			p.CloseOutput()
		}
		return
	}
	_ = procgroup.Kill(p.cmd)
}

// KillLeader kills the PM alone, as a crash would, leaving what it started
// running. It does not wait. An in-process PM is killed as by Kill.
func (p *Process) KillLeader() error {
	if p.cmd == nil {
		p.Kill()
		return nil
	}
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("killing the PM: %w", err)
	}
	return nil
}

// errKilled is what writing to a killed in-process PM fails with.
var errKilled = errors.New("the in-process PM was killed")

// terminate asks the PM's process group to stop (an in-process PM's
// harness is cancelled).
func (p *Process) terminate() {
	if p.cmd == nil {
		p.cancel()
		return
	}
	_ = procgroup.Terminate(p.cmd)
}

// Stop shuts the PM down in phases, each bounded by t: it closes the PM's
// stdin and waits t.Grace for it to exit, then asks its process group to
// terminate and waits t.Term, then kills the group and waits for the PM's
// exit. Whatever is left in the group is then killed too. Last it waits up
// to t.Drain for the PM's stderr to end: a process the PM started outside
// its group (setsid) may hold it open for as long as it lives, and past
// Drain it is no longer read. A zero phase is skipped. Stop does not touch
// stdout (see CloseOutput). It reports whether the PM exited by itself
// within the grace period, and logs each escalation to log (may be nil).
func (p *Process) Stop(t Timeouts, log *slog.Logger) (exitedByItself bool) {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	p.CloseInput()
	exitedByItself = p.wait(t.Grace)
	if !exitedByItself {
		if t.Term > 0 {
			log.Warn("PM did not exit after its input closed; sending SIGTERM", "grace", t.Grace)
			p.terminate()
		}
		if !p.wait(t.Term) {
			if t.Term > 0 {
				log.Warn("PM did not exit after SIGTERM; sending SIGKILL")
			}
			p.Kill()
			<-p.exited
		}
	}
	// Whatever the PM left in its process group goes with it.
	p.Kill()
	p.drainStderr(t.Drain, log)
	return exitedByItself
}

// Wait waits for the PM to exit, then up to drain for the end of its
// stderr (see Stop), and returns how it exited (see ExitErr). It neither
// closes the PM's input nor signals it.
func (p *Process) Wait(drain time.Duration) error {
	<-p.exited
	p.drainStderr(drain, nil)
	return p.waitErr
}

// SettleStderr waits, once the PM has exited, up to d for its stderr to be
// read to its end, so that Stderr holds what it wrote last: the process's
// exit can be seen a moment before the last of its stderr has been read.
// While the PM runs it returns at once. Unlike Stop and Wait it never stops
// the reading of stderr.
func (p *Process) SettleStderr(d time.Duration) {
	select {
	case <-p.exited:
	default:
		return
	}
	drained := make(chan struct{})
	go func() {
		p.readers.Wait()
		close(drained)
	}()
	waitFor(drained, d)
}

// drainStderr waits up to d for the PM's stderr to be read to its end, and
// past d stops reading it.
func (p *Process) drainStderr(d time.Duration, log *slog.Logger) {
	drained := make(chan struct{})
	go func() {
		p.readers.Wait()
		close(drained)
	}()
	if !waitFor(drained, d) {
		if log != nil {
			log.Warn("the PM has exited but a process it started still holds its stderr open; no longer reading it", "drain", d)
		}
		p.errR.Close() // ends the pending read
		<-drained
	}
}

// wait waits up to d for the PM to exit and reports whether it did.
func (p *Process) wait(d time.Duration) bool { return waitFor(p.exited, d) }

// waitFor waits up to d for ch to be closed and reports whether it was.
func waitFor(ch <-chan struct{}, d time.Duration) bool {
	select {
	case <-ch:
		return true
	default:
	}
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		return false
	}
}
