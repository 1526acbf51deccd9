//go:build unix

package host_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/host"
)

// syncBuffer is a bytes.Buffer safe for the writer goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A Process carries lines both ways as they are, reports a last line cut
// short by the end of the output, copies both outputs when asked, and says
// how the PM exited.
func TestProcessRawLines(t *testing.T) {
	var stdout, stderr syncBuffer
	p, err := host.StartProcess(host.Spec{Command: "sh", Args: []string{"-c", `echo to-stderr >&2; cat; exit 3`}},
		host.ProcessOptions{Dir: t.TempDir(), StdoutTo: &stdout, StderrTo: &stderr, MaxMessage: 10})
	if err != nil {
		t.Fatal(err)
	}
	if p.PID() <= 0 {
		t.Errorf("PID = %d", p.PID())
	}
	if err := p.WriteLine([]byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if err := p.Write([]byte("0123456789abcdef\n\ncut")); err != nil {
		t.Fatal(err)
	}
	p.CloseInput()
	if line, err := p.ReadLine(); err != nil || string(line) != `{"a":1}` || p.Unterminated() {
		t.Errorf("first line %q, %v, unterminated %v", line, err, p.Unterminated())
	}
	var tooLong *framing.TooLongError
	if _, err := p.ReadLine(); !errors.As(err, &tooLong) || tooLong.Size != 16 {
		t.Errorf("a line over the bound: %v, want a TooLongError of 16 bytes", err)
	}
	if line, err := p.ReadLine(); err != nil || string(line) != "cut" || !p.Unterminated() {
		t.Errorf("last line %q, %v, unterminated %v; want the cut line", line, err, p.Unterminated())
	}
	if _, err := p.ReadLine(); !errors.Is(err, io.EOF) {
		t.Errorf("after the end: %v, want io.EOF", err)
	}
	if p.Stop(host.Timeouts{Grace: time.Minute, Drain: time.Minute}, nil) != true {
		t.Error("a PM that exits at the end of its input was not seen to exit by itself")
	}
	if got := p.ExitDescription(); got != "exit status 3" {
		t.Errorf("ExitDescription = %q", got)
	}
	if got := p.Stderr(); len(got) != 1 || got[0] != "to-stderr" {
		t.Errorf("Stderr = %q", got)
	}
	if got := stderr.String(); got != "to-stderr\n" {
		t.Errorf("stderr copy %q", got)
	}
	if got := stdout.String(); got != "{\"a\":1}\n0123456789abcdef\n\ncut" {
		t.Errorf("stdout copy %q", got)
	}
}

// Stop escalates: a PM that ignores the end of its input and SIGTERM is
// killed with its process group.
func TestProcessStopEscalates(t *testing.T) {
	p, err := host.StartProcess(host.Spec{Command: "sh", Args: []string{"-c", `trap '' TERM; echo ready; while :; do sleep 1; done`}},
		host.ProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if line, err := p.ReadLine(); err != nil || string(line) != "ready" {
		t.Fatalf("waiting for the trap: %q, %v", line, err)
	}
	// Short phases: their expiry is the point.
	if p.Stop(host.Timeouts{Grace: 50 * time.Millisecond, Term: 50 * time.Millisecond, Drain: time.Minute}, nil) {
		t.Error("a PM that ignores its input's end reported as exiting by itself")
	}
	if got := p.ExitDescription(); got != "signal: killed" {
		t.Errorf("ExitDescription = %q, want signal: killed", got)
	}
	p.CloseOutput()
}

// KillLeader ends the PM alone; Wait reports how.
func TestProcessKillLeader(t *testing.T) {
	p, err := host.StartProcess(host.Spec{Command: "sh", Args: []string{"-c", `echo ready; exec sleep 300`}}, host.ProcessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.ReadLine(); err != nil {
		t.Fatal(err)
	}
	if err := p.KillLeader(); err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(time.Minute); err == nil || host.ExitDescription(err) != "signal: killed" {
		t.Errorf("Wait = %v, want the kill", err)
	}
	if err := p.KillLeader(); err != nil {
		t.Errorf("KillLeader of a PM already gone: %v", err)
	}
	p.Stop(host.Timeouts{}, nil)
}

func TestStartProcessMissingCommand(t *testing.T) {
	_, err := host.StartProcess(host.Spec{Command: "no-such-pm-command-xyz"}, host.ProcessOptions{})
	if err == nil || !strings.Contains(err.Error(), `cannot find PM command "no-such-pm-command-xyz"`) {
		t.Errorf("StartProcess: %v", err)
	}
}

func TestExitDescription(t *testing.T) {
	if got := host.ExitDescription(nil); got != "exit status 0" {
		t.Errorf("ExitDescription(nil) = %q", got)
	}
	if got := host.ExitDescription(errors.New("boom")); got != "boom" {
		t.Errorf("ExitDescription(boom) = %q", got)
	}
}
