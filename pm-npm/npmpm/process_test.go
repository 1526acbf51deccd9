package npmpm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// asPMEnv, set in a child's environment, makes the test binary run as the
// symposium-pm-npm binary (the same main), so that fault tests drive a real
// PM process without building one.
const asPMEnv = "SYMPOSIUM_NPM_TEST_AS_PM"

func TestMain(m *testing.M) {
	if os.Getenv(asPMEnv) == "1" {
		pmserver.Main(New(), pmserver.WithVersion(Version))
		return
	}
	os.Exit(m.Run())
}

// callTimeout bounds every answer a test waits for, so a hung PM fails the
// test instead of stalling the suite.
const callTimeout = time.Minute

// pmProc is a PM process speaking the protocol over pipes.
type pmProc struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // stdout lines
	stderr *lockedBuffer
	out    *lockedBuffer // every stdout byte, for secret checks
	nextID int
	done   chan struct{} // closed when the process has been waited for
	err    error         // Wait's result, valid after done
}

// lockedBuffer is a bytes.Buffer safe for one writer and many readers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// rpcResponse is one JSON-RPC response.
type rpcResponse struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *protocol.Error `json:"error"`
}

// startPM starts the test binary as a PM with exactly the process
// environment procEnv (plus the switch that makes it a PM) and initializes
// it on workspace and cache with initEnv.
func startPM(t *testing.T, workspace, cache string, procEnv, initEnv map[string]string) *pmProc {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{asPMEnv + "=1"}
	for k, v := range procEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &pmProc{t: t, cmd: cmd, lines: make(chan []byte, 16), stderr: &lockedBuffer{}, out: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(io.TeeReader(stdout, p.out))
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	if initEnv == nil {
		initEnv = map[string]string{}
	}
	if r := p.call(protocol.MethodInitialize, protocol.InitializeParams{
		ProtocolVersion: protocol.Version, Workspace: workspace, CacheDir: cache, Env: initEnv,
	}); r.Error != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", r.Error, p.stderr)
	}
	return p
}

// send writes a request and returns its id.
func (p *pmProc) send(method string, params any) int {
	p.t.Helper()
	p.nextID++
	line, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.stdin.Write(append(line, '\n')); err != nil {
		p.t.Fatalf("writing %s request: %v\nstderr:\n%s", method, err, p.stderr)
	}
	return p.nextID
}

// recv returns the next response.
func (p *pmProc) recv() rpcResponse {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("the PM closed stdout (%v)\nstderr:\n%s", p.err, p.stderr)
		}
		var r rpcResponse
		if err := json.Unmarshal(line, &r); err != nil {
			p.t.Fatalf("bad response line %q: %v", line, err)
		}
		return r
	case <-time.After(callTimeout):
		_ = p.cmd.Process.Kill()
		p.t.Fatalf("no answer within %v\nstderr:\n%s", callTimeout, p.stderr)
	}
	return rpcResponse{}
}

// call sends one request and waits for its answer.
func (p *pmProc) call(method string, params any) rpcResponse {
	p.t.Helper()
	id := p.send(method, params)
	r := p.recv()
	if r.ID != id {
		p.t.Fatalf("%s: answer for id %d, want %d", method, r.ID, id)
	}
	return r
}

// fetch calls fetch and decodes a successful result.
func (p *pmProc) fetch(name, version string, update protocol.UpdateLevel) (protocol.FetchResult, *protocol.Error) {
	p.t.Helper()
	r := p.call(protocol.MethodFetch, protocol.FetchParams{ID: npmID(name, version), Update: update})
	var res protocol.FetchResult
	if r.Error == nil {
		if err := json.Unmarshal(r.Result, &res); err != nil {
			p.t.Fatalf("fetch result %s: %v", r.Result, err)
		}
	}
	return res, r.Error
}

// close ends the input and waits for a clean exit.
func (p *pmProc) close() {
	p.t.Helper()
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(callTimeout):
		_ = p.cmd.Process.Kill()
		p.t.Fatalf("the PM did not exit after end of input\nstderr:\n%s", p.stderr)
	}
	if p.err != nil {
		p.t.Errorf("PM exit: %v\nstderr:\n%s", p.err, p.stderr)
	}
	if strings.Contains(p.stderr.String(), "panic") {
		p.t.Errorf("the PM panicked:\n%s", p.stderr)
	}
}

// kill ends the process with SIGKILL, as a crash or an impatient host would.
func (p *pmProc) kill() {
	p.t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		p.t.Fatal(err)
	}
	<-p.done
	if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		p.t.Fatalf("the PM was not killed by SIGKILL: %v", p.err)
	}
}

// isolatedEnv is a process environment that reads no configuration of the
// user running the tests.
func isolatedEnv(t *testing.T, extra map[string]string) map[string]string {
	env := map[string]string{
		"HOME":                    t.TempDir(),
		"npm_config_globalconfig": filepath.Join(t.TempDir(), "npmrc"),
		pmserver.LogEnv:           "debug",
	}
	for k, v := range extra {
		env[k] = v
	}
	return env
}

// wantCode fails unless err is a protocol error with code.
func wantCode(t *testing.T, what string, err *protocol.Error, code protocol.Code) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: succeeded, want error %d", what, code)
	} else if err.Code != code {
		t.Errorf("%s: %d %s, want code %d", what, err.Code, err.Message, code)
	}
}

// tree describes every file and directory under root (relative path →
// kind, size, mode and a content digest for files) to detect any write.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		desc := fmt.Sprintf("%v %d", fi.Mode(), fi.Size())
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			desc += " " + string(b)
		}
		out[filepath.ToSlash(rel)] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
