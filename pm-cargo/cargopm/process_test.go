package cargopm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// pmBinaryOnce builds the PM binary once per test process.
var pmBinaryOnce = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "symposium-pm-cargo-test-")
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "symposium-pm-cargo")
	cmd := exec.Command("go", "build", "-o", out, "github.com/symposium-dev/symposium-pm/pm-cargo/cmd/symposium-pm-cargo")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, b)
	}
	return out, nil
})

func pmBinary(t testing.TB) string {
	t.Helper()
	bin, err := pmBinaryOnce()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// pmProc is a running PM binary driven over its stdio.
type pmProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stderr *lockedBuffer
	nextID int
}

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

// startPM starts the binary with the given process environment and sends
// initialize with initEnv.
func startPM(t testing.TB, procEnv []string, workspace, cacheDir string, initEnv map[string]string) *pmProc {
	t.Helper()
	cmd := exec.Command(pmBinary(t))
	cmd.Env = procEnv
	cmd.Dir = workspace
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pmProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 64), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.stdin.Close()
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			p.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(p.lines)
	}()
	resp := p.call("initialize", map[string]any{"protocol_version": 1, "workspace": workspace, "cache_dir": cacheDir, "env": initEnv})
	if resp.Error != nil {
		t.Fatalf("initialize: %s", resp.Error)
	}
	return p
}

// rpcResponse is one response line.
type rpcResponse struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Raw    string          `json:"-"`
}

// code is the error code of the response (0 for success).
func (r rpcResponse) code() int {
	var e struct{ Code int }
	json.Unmarshal(r.Error, &e)
	return e.Code
}

// send writes a request and returns its id without waiting.
func (p *pmProc) send(method string, params any) int {
	p.t.Helper()
	p.nextID++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	if _, err := p.stdin.Write(append(req, '\n')); err != nil {
		p.t.Fatalf("writing %s: %v", method, err)
	}
	return p.nextID
}

// wait reads responses until the one for id (others are dropped).
func (p *pmProc) wait(id int) rpcResponse {
	p.t.Helper()
	timeout := time.After(90 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("PM closed stdout waiting for response %d; stderr:\n%s", id, p.stderr.String())
			}
			var r rpcResponse
			if err := json.Unmarshal(line, &r); err != nil {
				p.t.Fatalf("PM wrote a non-JSON line %q: %v", line, err)
			}
			r.Raw = string(line)
			if r.ID == id {
				return r
			}
		case <-timeout:
			p.t.Fatalf("no response %d in 90s; stderr:\n%s", id, p.stderr.String())
		}
	}
}

func (p *pmProc) call(method string, params any) rpcResponse {
	p.t.Helper()
	return p.wait(p.send(method, params))
}

func pkgParams(name, version, update string) map[string]any {
	m := map[string]any{"id": map[string]string{"pm": Name, "name": name, "version": version}}
	if update != "" {
		m["update"] = update
	}
	return m
}
