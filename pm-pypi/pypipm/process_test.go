package pypipm

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// pmProc is a real symposium-pm-pypi process (the test binary's copy that
// testscript.Main put on PATH) driven over its stdin and stdout.
type pmProc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte
	stdout *lockedBuffer // every line written, for secret checks
	stderr *lockedBuffer
	nextID int
	exited chan struct{}
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

// baseProcEnv is a process environment with nothing of the machine's
// index configuration: PATH, a private HOME and debug logging.
func baseProcEnv(t testing.TB, extra ...string) []string {
	return append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SYMPOSIUM_LOG=debug",
		"PIP_CONFIG_FILE=" + os.DevNull}, extra...)
}

// startPM starts the PM with the process environment procEnv and sends
// initialize with initEnv.
func startPM(t testing.TB, procEnv []string, ws, cacheDir string, initEnv map[string]string) *pmProc {
	t.Helper()
	bin, err := exec.LookPath("symposium-pm-pypi")
	if err != nil {
		t.Fatalf("the PM binary is not on PATH (testscript.Main): %v", err)
	}
	cmd := exec.Command(bin)
	cmd.Env = procEnv
	cmd.Dir = ws
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &pmProc{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 64),
		stdout: &lockedBuffer{}, stderr: &lockedBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := append([]byte(nil), sc.Bytes()...)
			p.stdout.Write(append(line, '\n'))
			p.lines <- line
		}
		close(p.lines)
		cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop() })
	if initEnv == nil {
		initEnv = map[string]string{}
	}
	resp := p.call("initialize", map[string]any{"protocol_version": 1, "workspace": ws, "cache_dir": cacheDir, "env": initEnv})
	if resp.Error != nil {
		t.Fatalf("initialize: %s", resp.Error)
	}
	return p
}

// stop closes stdin and waits for the process to exit, killing it after
// ten seconds.
func (p *pmProc) stop() {
	p.stdin.Close()
	select {
	case <-p.exited:
	case <-time.After(10 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// kill SIGKILLs the process and waits for it.
func (p *pmProc) kill() {
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.exited
}

type rpcResponse struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	Raw    string          `json:"-"`
}

func (r rpcResponse) code() int {
	var e struct{ Code int }
	json.Unmarshal(r.Error, &e)
	return e.Code
}

func (p *pmProc) send(method string, params any) int {
	p.t.Helper()
	p.nextID++
	req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": p.nextID, "method": method, "params": params})
	if _, err := p.stdin.Write(append(req, '\n')); err != nil {
		p.t.Fatalf("writing %s: %v", method, err)
	}
	return p.nextID
}

func (p *pmProc) wait(id int) rpcResponse {
	p.t.Helper()
	timeout := time.After(60 * time.Second)
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
			p.t.Fatalf("no response %d in 60s; stderr:\n%s", id, p.stderr.String())
		}
	}
}

func (p *pmProc) call(method string, params any) rpcResponse {
	p.t.Helper()
	return p.wait(p.send(method, params))
}

func fetchParams(name, version, update string) map[string]any {
	return map[string]any{"id": map[string]string{"pm": Name, "name": name, "version": version}, "update": update}
}

// treeOf lists every path under dir (slash-separated, relative), with "/"
// after directories.
func treeOf(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	return out
}

// onlyDirs reports the paths of tree that are not directories.
func onlyDirs(tree []string) []string {
	var files []string
	for _, p := range tree {
		if !strings.HasSuffix(p, "/") {
			files = append(files, p)
		}
	}
	return files
}
