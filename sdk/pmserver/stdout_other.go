//go:build !unix

package pmserver

import "os"

// redirectStdout keeps the real stdout for the protocol; on this platform
// only os.Stdout is redirected, not descriptor-level writes.
func redirectStdout() (*os.File, error) {
	return os.Stdout, nil
}
