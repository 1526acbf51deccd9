//go:build unix

package release

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// sharedModCache returns a module cache kept between runs of the test (so
// the public modules are not unpacked again each time), locked for the
// test's duration against other runs of it. ok is false when none can be
// had.
func sharedModCache(t *testing.T) (dir string, ok bool) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", false
	}
	dir = filepath.Join(base, "symposium-pm", "release-test")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", false
	}
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return "", false
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
	return filepath.Join(dir, "modcache"), true
}
