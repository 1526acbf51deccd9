// Package procgroup starts a child process in a process group of its own and
// signals the whole group, so that what the child starts in turn (a PM's
// helpers, a toolchain's compilers) is stopped with it.
//
// It is the one place the SDK sets up and signals process groups: the host's
// PM client, the conformance kit, the toolchain runs of acquire and the cargo
// PM's runs of cargo all use it.
// On systems without process groups (Windows) Set does nothing and the
// signals reach the child alone.
package procgroup

import (
	"errors"
	"os"
	"os/exec"
)

// KillOnCancel puts cmd in a group of its own (see Set) and makes the
// cancellation of the context of an exec.CommandContext kill the whole group
// rather than the child alone.
func KillOnCancel(cmd *exec.Cmd) {
	Set(cmd)
	cmd.Cancel = func() error { return Kill(cmd) }
}

// Kill sends SIGKILL to cmd's process group (to the process alone where
// there are no groups). A process not started yet, or a group already gone,
// is not an error.
func Kill(cmd *exec.Cmd) error { return signal(cmd, true) }

// Terminate asks cmd's process group to stop (SIGTERM; where there are no
// groups or no SIGTERM, the process is killed).
func Terminate(cmd *exec.Cmd) error { return signal(cmd, false) }

// ignoreGone drops the errors that only say the target no longer exists.
func ignoreGone(err error) error {
	if err == nil || errors.Is(err, os.ErrProcessDone) || isNoSuchProcess(err) {
		return nil
	}
	return err
}
