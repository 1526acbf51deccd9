//go:build unix

package procgroup_test

import (
	"bufio"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/procgroup"
)

// startWithChild starts a shell that starts a sleeping child, prints the
// child's pid and waits; it returns the command and the child's pid.
func startWithChild(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the child's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("child pid %q: %v", line, err)
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	return pid
}

// gone waits (generously) for pid to be gone or a zombie, and reports
// whether it went.
func gone(pid int) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) != nil {
			return true
		}
		var ws syscall.WaitStatus
		// The child's parent is the shell, gone too: it is reparented and
		// reaped by init; until then kill(0) succeeds on the zombie.
		if wpid, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); wpid == pid {
			return true
		}
		if zombie(pid) {
			return true
		}
	}
	return false
}

func TestKillReachesTheGroup(t *testing.T) {
	for _, tc := range []struct {
		name   string
		signal func(*exec.Cmd) error
	}{
		{"kill", procgroup.Kill},
		{"terminate", procgroup.Terminate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("sh", "-c", "sleep 300 & echo $!; wait")
			procgroup.Set(cmd)
			child := startWithChild(t, cmd)
			if err := tc.signal(cmd); err != nil {
				t.Fatalf("signalling the group: %v", err)
			}
			cmd.Wait()
			if !gone(child) {
				t.Errorf("the shell's child %d survived the signal to its group", child)
			}
			// The group is gone: signalling it again is not an error.
			if err := tc.signal(cmd); err != nil {
				t.Errorf("signalling a group that is gone: %v", err)
			}
		})
	}
}

func TestKillOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cmd := exec.CommandContext(ctx, "sh", "-c", "sleep 300 & echo $!; wait")
	procgroup.KillOnCancel(cmd)
	child := startWithChild(t, cmd)
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Error("the cancelled command exited cleanly")
	}
	if !gone(child) {
		t.Errorf("the child %d survived the cancellation", child)
	}
}

func TestNotStarted(t *testing.T) {
	cmd := exec.Command("true")
	if err := procgroup.Kill(cmd); err != nil {
		t.Errorf("Kill before Start: %v", err)
	}
	if err := procgroup.Terminate(cmd); err != nil {
		t.Errorf("Terminate before Start: %v", err)
	}
}
