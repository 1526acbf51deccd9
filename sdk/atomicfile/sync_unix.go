//go:build unix

package atomicfile

import "os"

// syncDir flushes a directory's entries, so that a rename in it survives a
// crash. Failure is ignored: the rename itself succeeded.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
