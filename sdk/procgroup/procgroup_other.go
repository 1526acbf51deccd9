//go:build !unix

package procgroup

import "os/exec"

// Set does nothing: this system has no process groups.
func Set(cmd *exec.Cmd) {}

func signal(cmd *exec.Cmd, kill bool) error {
	if cmd.Process == nil {
		return nil
	}
	return ignoreGone(cmd.Process.Kill())
}

func isNoSuchProcess(err error) bool { return false }
