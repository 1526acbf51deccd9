package cargopm

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd when this process dies, so a PM
// killed in the middle of a fetch leaves no cargo holding cargo's package
// cache lock.
// It keeps the other fields of cmd.SysProcAttr (the process group).
func dieWithParent(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
