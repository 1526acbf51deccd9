package cargopm

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the kernel kill cmd when this process dies, so a PM
// killed in the middle of a fetch leaves no cargo holding cargo's package
// cache lock.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
