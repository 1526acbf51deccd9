//go:build unix

package gitregistry_test

import (
	"io/fs"
	"syscall"
)

// allocated returns the bytes allocated to a file, its device and inode,
// and its number of hard links.
func allocated(fi fs.FileInfo) (size int64, dev, ino, links uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi.Size(), 0, 0, 1
	}
	return int64(st.Blocks) * 512, uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink)
}
