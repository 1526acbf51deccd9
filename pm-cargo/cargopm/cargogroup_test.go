//go:build unix

package cargopm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCancelledCargoTakesItsChildren: cancelling a cargo run kills what
// cargo started too (here a sleep standing in for git or a compiler), not
// cargo alone.
func TestCancelledCargoTakesItsChildren(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	cargo := filepath.Join(dir, "cargo")
	script := "#!/bin/sh\nsleep 300 &\necho $! > " + pidFile + ".tmp\nmv " + pidFile + ".tmp " + pidFile + "\nwait\n"
	if err := os.WriteFile(cargo, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p := newPM(t, dir, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { _, err := p.cargoOutput(ctx, cargo, "fetch"); done <- err }()
	var pid int
	for deadline := time.Now().Add(time.Minute); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the fake cargo never started its child")
		}
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	cancel()
	// A child left alive keeps cargo's output open, and the run would
	// not return until it exits.
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled run returned %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("the cancelled cargo run has not returned after a minute: its child %d lives on", pid)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if zombie(pid) {
			return // killed, waiting for init to reap it
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("cargo's child %d outlived the cancelled run", pid)
		}
	}
}

// zombie reports whether pid has exited and awaits its reaping.
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}
