package npmpm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// asPMEnv, set in a child's environment, makes the test binary run as the
// symposium-pm-npm binary (the same main), so that fault tests drive a real
// PM process without building one.
const asPMEnv = "SYMPOSIUM_NPM_TEST_AS_PM"

// callTimeout bounds how long a test waits for the PM's work to show.
const callTimeout = time.Minute

// pmProc is a PM process speaking the protocol over pipes.
type pmProc struct {
	*pmtest.Proc
	t *testing.T
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
	env := []string{asPMEnv + "=1"}
	for k, v := range procEnv {
		env = append(env, k+"="+v)
	}
	return &pmProc{Proc: pmtest.StartProc(t, exe, nil, workspace, cache, initEnv, pmtest.ProcEnv(env...)), t: t}
}

// fetch calls fetch and decodes a successful result.
func (p *pmProc) fetch(name, version string, update protocol.UpdateLevel) (protocol.FetchResult, *protocol.Error) {
	p.t.Helper()
	r := p.Call(protocol.MethodFetch, protocol.FetchParams{ID: npmID(name, version), Update: update})
	var res protocol.FetchResult
	if r.Error == nil {
		if err := json.Unmarshal(r.Result, &res); err != nil {
			p.t.Fatalf("fetch result %s: %v", r.Result, err)
		}
	}
	return res, r.Error
}

// close ends the input and checks for a clean exit.
func (p *pmProc) close() {
	p.t.Helper()
	if err := p.Close(); err != nil {
		p.t.Errorf("PM exit: %v\nstderr:\n%s", err, p.Stderr())
	}
	if strings.Contains(p.Stderr(), "panic") {
		p.t.Errorf("the PM panicked:\n%s", p.Stderr())
	}
}

// kill ends the process with SIGKILL, as a crash or an impatient host would.
func (p *pmProc) kill() {
	p.t.Helper()
	err := p.Kill()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		p.t.Fatalf("the PM was not killed: %v", err)
	}
	if ws, ok := exit.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		p.t.Fatalf("the PM was not killed by SIGKILL: %v", err)
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
