//go:build !unix

package pmtest

import "os/exec"

func setProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the PM process; without process groups its children are
// not reached.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
