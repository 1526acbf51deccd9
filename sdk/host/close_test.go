//go:build unix

package host_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// A PM whose wrapper leaves a process in a session of its own holding the
// PM's output: Close returns once the PM is gone, without waiting for that
// process (which outlives it, out of the host's reach) to let go of the pipes.
func TestCloseDoesNotWaitForEscapedGrandchild(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("needs setsid")
	}
	script, err := filepath.Abs("testdata/escaping-grandchild-pm")
	if err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(t.TempDir(), "grandchild.pid")
	ctx := t.Context()
	c, err := host.Start(ctx, host.Spec{Name: "escaper", Command: script, Env: []string{"GRANDCHILD_PIDFILE=" + pidfile}},
		host.Options{Workspace: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	var offers []protocol.Offer
	if err := c.Call(ctx, protocol.MethodActivePlugins, protocol.ActivePluginsParams{Deps: []protocol.PackageID{}}, &offers); err != nil {
		t.Fatal(err)
	}
	pid := waitPID(t, pidfile)
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })

	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Close is still waiting after 60s, for the output pipes a process the PM started holds")
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatalf("the escaped process %d is gone: Close waited for it instead of returning", pid)
	}
	if got := strings.Join(c.Stderr(), "\n"); !strings.Contains(got, "escaper: started a process") {
		t.Errorf("stderr kept: %q; want the PM's line", got)
	}
}

// waitPID waits (generously) for the pid the escaped process records.
func waitPID(t *testing.T, file string) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(file)
		if err == nil {
			pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil {
				t.Fatalf("pid file %s: %v", file, err)
			}
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("the escaped process never wrote %s", file)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
