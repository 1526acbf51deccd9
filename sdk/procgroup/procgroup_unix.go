//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
)

// Set makes cmd, once started, the leader of a new process group, which the
// processes it starts join unless they leave it themselves (setsid). It
// keeps the other fields of cmd.SysProcAttr.
func Set(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

func signal(cmd *exec.Cmd, kill bool) error {
	if cmd.Process == nil {
		return nil
	}
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	return ignoreGone(syscall.Kill(-cmd.Process.Pid, sig))
}

func isNoSuchProcess(err error) bool { return errors.Is(err, syscall.ESRCH) }
