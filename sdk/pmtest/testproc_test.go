package pmtest_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// startRaw starts this test binary as the raw PM, which follows every rule.
func startRaw(t *testing.T) *pmtest.Proc {
	t.Helper()
	return pmtest.StartProc(t, self(t)[0], nil, rawWorkspace(t), t.TempDir(), nil, pmtest.ProcEnv("PMTEST_RAW_PM="))
}

// echo is the answer of the "echo" program: what it was sent and where it
// runs.
type echo struct {
	Request struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      int             `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	Init  protocol.InitializeParams
	Args  []string
	Env   []string
	Dir   string
	PID   int
	Child int
}

func decodeEcho(t *testing.T, r pmtest.Response) echo {
	t.Helper()
	var e echo
	if err := json.Unmarshal(r.Result, &e); err != nil {
		t.Fatalf("echo answer %s: %v", r.Raw, err)
	}
	return e
}

func TestProcCallsRawPM(t *testing.T) {
	p := startRaw(t)
	r := p.Call(protocol.MethodListDeps, nil)
	if r.Error != nil || r.Code() != 0 || r.ID != 2 {
		t.Fatalf("list_deps: %+v", r)
	}
	var deps []protocol.PackageID
	if err := json.Unmarshal(r.Result, &deps); err != nil || len(deps) != 2 || deps[0].Name != "alpha" {
		t.Errorf("list_deps result %s: %v", r.Result, err)
	}
	if !strings.HasPrefix(r.Raw, "{") || !strings.Contains(r.Raw, string(r.Result)) {
		t.Errorf("raw line %q does not hold the result %s", r.Raw, r.Result)
	}

	foreign := p.Call(protocol.MethodFetch, protocol.FetchParams{ID: protocol.PackageID{PM: "other", Name: "alpha", Version: "1.0.0"}, Update: protocol.UpdateNone})
	if foreign.Code() != protocol.CodeForeignID || foreign.Result != nil || !strings.Contains(foreign.Raw, `"code":-32015`) {
		t.Errorf("fetch of a foreign id: code %d, response %s", foreign.Code(), foreign.Raw)
	}

	// Answers read while waiting for another are kept for their own Wait,
	// and for Next.
	alpha := p.Send(protocol.MethodFetch, protocol.FetchParams{ID: protocol.PackageID{PM: "raw", Name: "alpha", Version: "1.0.0"}, Update: protocol.UpdateNone})
	beta := p.Send(protocol.MethodFetch, protocol.FetchParams{ID: protocol.PackageID{PM: "raw", Name: "beta", Version: "*"}, Update: protocol.UpdateNone})
	search := p.Send(protocol.MethodSearch, protocol.SearchParams{Query: "alph"})
	if rb := p.Wait(beta); rb.ID != beta || rb.Code() != protocol.CodeOffline {
		t.Errorf("beta: %s", rb.Raw)
	}
	if ra := p.Next(); ra.ID != alpha || ra.Code() != 0 || !strings.Contains(string(ra.Result), filepath.Join("plugins", "alpha")) {
		t.Errorf("Next after beta: %s, want the answer to %d", ra.Raw, alpha)
	}
	if rs := p.Next(); rs.ID != search || !strings.Contains(string(rs.Result), "the first") {
		t.Errorf("Next: %s, want the answer to %d", rs.Raw, search)
	}

	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	out := p.Stdout()
	if n := strings.Count(out, "\n"); n != 6 {
		t.Errorf("stdout holds %d lines, want 6 (initialize and five requests):\n%s", n, out)
	}
	for _, raw := range []string{r.Raw, foreign.Raw} {
		if !strings.Contains(out, raw+"\n") {
			t.Errorf("stdout lacks the line %s", raw)
		}
	}
}

func TestProcSendsWhatItIsGiven(t *testing.T) {
	ws, cache := t.TempDir(), t.TempDir()
	initEnv := map[string]string{"REGISTRY": "http://127.0.0.1:9/"}
	p := pmtest.StartProc(t, self(t)[0], []string{"-test.run=^$"}, ws, cache, initEnv,
		pmtest.ProcEnv("PMTEST_PROC_MODE=echo", "ONLY=this"))

	e := decodeEcho(t, p.Call("pmtest/echo", map[string]int{"n": 7}))
	if e.Request.JSONRPC != "2.0" || e.Request.ID != 2 || e.Request.Method != "pmtest/echo" || string(e.Request.Params) != `{"n":7}` {
		t.Errorf("request as received: %+v", e.Request)
	}
	want := protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: ws, CacheDir: cache, Env: initEnv}
	if e.Init.ProtocolVersion != want.ProtocolVersion || e.Init.Workspace != ws || e.Init.CacheDir != cache || !maps.Equal(e.Init.Env, initEnv) {
		t.Errorf("initialize params %+v, want %+v", e.Init, want)
	}
	if !slices.Equal(e.Args, []string{"-test.run=^$"}) {
		t.Errorf("arguments %q, want [-test.run=^$]", e.Args)
	}
	if !slices.Equal(e.Env, []string{"PMTEST_PROC_MODE=echo", "ONLY=this"}) {
		t.Errorf("process environment %q, want exactly the ProcEnv entries", e.Env)
	}
	if e.Dir != ws {
		t.Errorf("working directory %s, want the workspace %s", e.Dir, ws)
	}

	e = decodeEcho(t, p.Call("pmtest/no_params", nil))
	if e.Request.Params != nil {
		t.Errorf("nil params sent as %s, want them left out", e.Request.Params)
	}
	if err := p.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestProcInitializeEnvNeverNull(t *testing.T) {
	p := pmtest.StartProc(t, self(t)[0], nil, t.TempDir(), t.TempDir(), nil, pmtest.ProcEnv("PMTEST_PROC_MODE=echo"))
	e := decodeEcho(t, p.Call("pmtest/echo", nil))
	if e.Init.Env == nil {
		t.Error("a nil initialize env was sent as null, want {}")
	}
}

func TestProcKill(t *testing.T) {
	exe, ws, cache := self(t)[0], rawWorkspace(t), t.TempDir()
	var killErr error
	msg := fatalOf(t, func(tb testing.TB) {
		p := pmtest.StartProc(tb, exe, nil, ws, cache, nil, pmtest.ProcEnv("PMTEST_RAW_PM="))
		p.Send(protocol.MethodListDeps, nil)
		killErr = p.Kill()
		for {
			p.Next() // the answer to list_deps may have come before the kill
		}
	})
	var ee *exec.ExitError
	if !errors.As(killErr, &ee) {
		t.Fatalf("Kill returned %v, want the exit error of the killed PM", killErr)
	}
	if runtime.GOOS != "windows" && ee.ProcessState.String() != "signal: killed" {
		t.Errorf("the PM ended with %s, want signal: killed", ee.ProcessState)
	}
	if !strings.Contains(msg, "pmtest: waiting for response: the PM exited (signal: killed)") {
		t.Errorf("waiting on a killed PM failed with %q", msg)
	}
}

func TestProcFailuresReportStderr(t *testing.T) {
	// Only the silent PM waits out its timeout; the others fail on their
	// own, so their timeout is generous and a loaded machine cannot turn a
	// crash into a time-out. The silent PM writes its stderr line before
	// it stops answering, and 5 s leaves it time to do so under load.
	tests := []struct {
		mode    string
		timeout time.Duration
		want    []string
	}{
		{"crash", time.Minute, []string{"pmtest: waiting for response to request 1: the PM exited (exit status 3)", "boom: the last words of a crashing PM"}},
		{"silent", 5 * time.Second, []string{"pmtest: no response to request 1 within 5s", "stuck on purpose"}},
		{"garbage", time.Minute, []string{`the PM wrote a line that is not a JSON-RPC response: "this line is not JSON"`, "about to write garbage"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			msg := fatalOf(t, func(tb testing.TB) {
				pmtest.StartProc(tb, self(t)[0], nil, t.TempDir(), t.TempDir(), nil,
					pmtest.ProcEnv("PMTEST_PROC_MODE="+tt.mode), pmtest.ProcTimeout(tt.timeout))
			})
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("failure\n%s\ndoes not mention %q", msg, w)
				}
			}
		})
	}
}

func TestProcStartFailure(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-pm")
	msg := fatalOf(t, func(tb testing.TB) {
		pmtest.StartProc(tb, missing, nil, t.TempDir(), t.TempDir(), nil)
	})
	if !strings.Contains(msg, "pmtest: starting "+missing) {
		t.Errorf("starting a missing binary failed with %q", msg)
	}
}

func TestProcCloseKillsAPMThatStays(t *testing.T) {
	p := pmtest.StartProc(t, self(t)[0], nil, t.TempDir(), t.TempDir(), nil,
		// Only the wait for the exit is short: its expiry is the point; the
		// answer may take as long as a loaded machine needs.
		pmtest.ProcEnv("PMTEST_PROC_MODE=stubborn"), pmtest.ProcTimeout(time.Minute), pmtest.ProcCloseTimeout(300*time.Millisecond))
	r := p.Call("pmtest/echo", nil)
	start := time.Now()
	err := p.Close()
	if err == nil || !strings.Contains(err.Error(), "did not exit within 300ms of its input closing; it was killed") {
		t.Errorf("Close of a PM that stays: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Close took %v", d)
	}
	if !strings.Contains(p.Stdout(), r.Raw+"\n") {
		t.Errorf("stdout after Close lacks the answer %s", r.Raw)
	}
}

// fatalRecorder is a testing.TB whose Fatal and Error record the message
// instead of failing the test; Fatal ends the goroutine, as t.Fatal does.
type fatalRecorder struct {
	testing.TB
	mu  sync.Mutex
	msg string
}

func (r *fatalRecorder) record(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msg += msg
}

func (r *fatalRecorder) Fatalf(format string, args ...any) {
	r.record(fmt.Sprintf(format, args...))
	runtime.Goexit()
}

func (r *fatalRecorder) Fatal(args ...any) {
	r.record(fmt.Sprint(args...))
	runtime.Goexit()
}

func (r *fatalRecorder) Errorf(format string, args ...any) { r.record(fmt.Sprintf(format, args...)) }

func (r *fatalRecorder) Error(args ...any) { r.record(fmt.Sprint(args...)) }

// fatalOf runs f with a recorder in place of t and returns what f failed
// with; it fails t if f did not fail.
func fatalOf(t *testing.T, f func(tb testing.TB)) string {
	t.Helper()
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(rec)
	}()
	<-done
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.msg == "" {
		t.Fatal("expected a failure, got none")
	}
	return rec.msg
}
