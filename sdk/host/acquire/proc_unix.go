//go:build unix

package acquire

import (
	"os/exec"
	"syscall"
)

// groupKill runs the toolchain in a process group of its own and kills the
// whole group when the context ends, so compilers it started die with it.
func groupKill(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
