package pmtest_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// alive reports whether the process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z"
}

func TestProcCleanupKillsTheGroup(t *testing.T) {
	var pm, child int
	t.Run("running", func(t *testing.T) {
		p := pmtest.StartProc(t, self(t)[0], nil, t.TempDir(), t.TempDir(), nil, pmtest.ProcEnv("PMTEST_PROC_MODE=parent"))
		e := decodeEcho(t, p.Call("pmtest/echo", nil))
		pm, child = e.PID, e.Child
		if !alive(pm) || !alive(child) {
			t.Fatalf("the PM (%d) and its child (%d) are not both running", pm, child)
		}
	})
	if pm == 0 {
		t.Fatal("no PM ran")
	}
	if alive(pm) {
		t.Errorf("the PM %d still runs after its test ended", pm)
	}
	// The child, orphaned, is reaped by whoever adopted it.
	for deadline := time.Now().Add(5 * time.Second); alive(child) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(child) {
		t.Errorf("the PM's child %d still runs after the test ended", child)
	}
}
