//go:build !unix

package host

import (
	"os"
	"os/exec"
)

var (
	sigTerm = os.Kill
	sigKill = os.Kill
)

func setProcessGroup(cmd *exec.Cmd) {}

// signalGroup kills the PM process; without process groups its children are
// not reached.
func signalGroup(cmd *exec.Cmd, sig os.Signal) {
	if cmd.Process != nil {
		_ = cmd.Process.Signal(sig)
	}
}
