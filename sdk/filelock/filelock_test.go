package filelock

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func open(t *testing.T, path string) *File {
	t.Helper()
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestModes(t *testing.T) {
	for _, tt := range []struct {
		first, second Mode
		both          bool
	}{
		{Shared, Shared, true},
		{Shared, Exclusive, false},
		{Exclusive, Shared, false},
		{Exclusive, Exclusive, false},
	} {
		path := filepath.Join(t.TempDir(), "lock")
		a, b := open(t, path), open(t, path)
		if ok, err := a.TryLock(tt.first); !ok || err != nil {
			t.Fatalf("%s first: %v, %v", tt.first, ok, err)
		}
		ok, err := b.TryLock(tt.second)
		if err != nil || ok != tt.both {
			t.Errorf("%s then %s: %v, %v; want %v", tt.first, tt.second, ok, err, tt.both)
		}
		// Once the first is released, the second can always be taken.
		if err := a.Unlock(); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.TryLock(tt.second); !ok || err != nil {
			t.Errorf("%s after release: %v, %v", tt.second, ok, err)
		}
	}
}

func TestModeChange(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, b := open(t, path), open(t, path)
	if ok, _ := a.TryLock(Exclusive); !ok {
		t.Fatal("exclusive not taken")
	}
	if ok, err := a.TryLock(Shared); !ok || err != nil {
		t.Fatalf("downgrade: %v, %v", ok, err)
	}
	if ok, _ := b.TryLock(Shared); !ok {
		t.Error("a shared holder blocks another shared lock after a downgrade")
	}
	if ok, _ := a.TryLock(Exclusive); ok {
		t.Error("upgrade taken while another process holds the lock shared")
	}
}

func TestLockWaitsAndGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	a, b := open(t, path), open(t, path)
	if err := a.Lock(context.Background(), Exclusive); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := b.Lock(ctx, Shared)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Lock with a cancelled context: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- b.Lock(context.Background(), Exclusive) }()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Lock still waiting a minute after the holder closed")
	}
}

func TestOpenError(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing", "lock"))
	if err == nil {
		t.Fatal("no error for a lock file in a missing directory")
	}
}

// TestReleasedWhenHolderDies runs a child process that takes the lock and is
// killed: the lock is free afterwards.
func TestReleasedWhenHolderDies(t *testing.T) {
	if path := os.Getenv("FILELOCK_HOLD"); path != "" {
		l, err := Open(path)
		if err == nil {
			_, err = l.TryLock(Exclusive)
		}
		if err != nil {
			os.Stdout.WriteString("error " + err.Error() + "\n")
			os.Exit(1)
		}
		os.Stdout.WriteString("locked\n")
		time.Sleep(time.Hour)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	path := filepath.Join(t.TempDir(), "lock")
	cmd := exec.Command(exe, "-test.run=^TestReleasedWhenHolderDies$")
	cmd.Env = append(os.Environ(), "FILELOCK_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q", line)
	}
	l := open(t, path)
	if ok, _ := l.TryLock(Shared); ok {
		t.Error("lock taken while the child holds it")
	}
	cmd.Process.Kill()
	cmd.Wait()
	if ok, err := l.TryLock(Exclusive); !ok || err != nil {
		t.Errorf("lock of a killed holder: %v, %v", ok, err)
	}
}
