//go:build !unix

package acquire

import "os/exec"

// groupKill keeps exec's default: the toolchain process is killed when the
// context ends.
func groupKill(cmd *exec.Cmd) {}
