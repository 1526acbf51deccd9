//go:build unix

package pmtest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the PM in a process group of its own, so that it and
// everything it starts can be killed together.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup kills the PM's process group; a group already gone is not an
// error.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
