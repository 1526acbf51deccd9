package pmserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// strayPM writes to stdout from a handler and from a child process, as a
// careless PM might.
type strayPM struct{ testPM }

func (p *strayPM) ListDeps(ctx context.Context) ([]protocol.PackageID, error) {
	fmt.Println("stray print from a handler")
	cmd := exec.Command("sh", "-c", "echo stray output from a child")
	cmd.Stdout = os.Stdout
	cmd.Run()
	fd1 := os.NewFile(1, "fd1")
	fmt.Fprintln(fd1, "stray write to descriptor 1")
	return nil, nil
}

// The test binary doubles as a PM built with Main when PMSERVER_TEST_MAIN is set.
func TestMain(m *testing.M) {
	switch os.Getenv("PMSERVER_TEST_MAIN") {
	case "1":
		pmserver.Main(&strayPM{}, pmserver.WithVersion("9.9.9"))
		return
	case "registry":
		pmserver.Main(&registryPM{})
		return
	}
	os.Exit(m.Run())
}

// registryPM is a PM without list_deps, as a registry PM is.
type registryPM struct{ base testPM }

func (p *registryPM) Name() string { return p.base.Name() }
func (p *registryPM) Initialize(ctx context.Context, s *pmserver.Session) error {
	return p.base.Initialize(ctx, s)
}
func (p *registryPM) ActivePlugins(ctx context.Context, deps []protocol.PackageID) ([]protocol.Offer, error) {
	return p.base.ActivePlugins(ctx, deps)
}
func (p *registryPM) LoadPlugin(ctx context.Context, id protocol.PackageID) ([]protocol.Offer, error) {
	return p.base.LoadPlugin(ctx, id)
}
func (p *registryPM) Fetch(ctx context.Context, id protocol.PackageID, u protocol.UpdateLevel) (protocol.FetchResult, error) {
	return p.base.Fetch(ctx, id, u)
}

func mainCmd(t *testing.T, args ...string) *exec.Cmd {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), "PMSERVER_TEST_MAIN=1")
	return cmd
}

// TestStdoutProtected checks that prints, children and raw writes to
// descriptor 1 land on stderr and the protocol stream stays clean.
func TestStdoutProtected(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("sh is not installed")
	}
	cmd := mainCmd(t)
	cmd.Stdin = strings.NewReader(initReq + "\n" + req(1, "list_deps", "") + "\n")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("PM failed: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 2 {
		t.Fatalf("stdout has %d lines, want the 2 responses:\n%s", len(lines), out)
	}
	for _, l := range lines {
		if !json.Valid([]byte(l)) {
			t.Errorf("stdout line is not JSON: %q", l)
		}
	}
	for _, want := range []string{"stray print from a handler", "stray output from a child", "stray write to descriptor 1"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

func TestVersionAndHelp(t *testing.T) {
	out, err := mainCmd(t, "--version").Output()
	if err != nil || !strings.Contains(string(out), "9.9.9") {
		t.Errorf("--version: %q, %v", out, err)
	}
	// Help asked for is on stdout, to be paged or searched; nothing else is
	// written.
	for _, arg := range []string{"--help", "-h", "-help"} {
		code, stdout, stderr := runMainCmd(t, arg)
		if code != 0 || !strings.HasPrefix(stdout, "Usage: ") || !strings.Contains(stdout, `the "test" package manager`) ||
			!strings.Contains(stdout, "\n  -max-message-size int\n") || stderr != "" {
			t.Errorf("%s: exit %d, want 0 with the usage on stdout alone\nstdout %q\nstderr %q", arg, code, stdout, stderr)
		}
	}
	// A bad command line is the error and the usage on stderr, exit 2.
	code, stdout, stderr := runMainCmd(t, "--no-such-flag")
	if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "flag provided but not defined: -no-such-flag\nUsage: ") {
		t.Errorf("--no-such-flag: exit %d, want 2 with the error and the usage on stderr alone\nstdout %q\nstderr %q", code, stdout, stderr)
	}
}

// runMainCmd runs the test binary as a PM with args and no input, and
// returns its exit code, stdout and stderr.
func runMainCmd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	cmd := mainCmd(t, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// The command --help suggests for trying the PM by hand calls a method the
// PM answers with something: list_deps when it lists dependencies, else
// active_plugins (a registry PM answers list_deps with [] whatever it holds).
func TestHelpExampleMethod(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{
		{"1", "Try it by hand with `symposium-pm call list_deps -- "},
		{"registry", "Try it by hand with `symposium-pm call active_plugins -- "},
	} {
		cmd := mainCmd(t, "--help")
		cmd.Env = append(cmd.Env, "PMSERVER_TEST_MAIN="+tc.mode)
		out, err := cmd.Output()
		if err != nil {
			t.Errorf("%s: --help: %v", tc.mode, err)
		}
		if !strings.Contains(string(out), tc.want) {
			t.Errorf("%s: --help does not say %q:\n%s", tc.mode, tc.want, out)
		}
	}
}

// TestSIGTERM checks that a PM waiting for input exits 0 on SIGTERM.
func TestSIGTERM(t *testing.T) {
	cmd := mainCmd(t)
	in, _ := cmd.StdinPipe()
	outPipe, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	io.WriteString(in, initReq+"\n")
	if !bufio.NewScanner(outPipe).Scan() {
		t.Fatal("no initialize response")
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v, want status 0", err)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the PM did not exit after SIGTERM")
	}
}
