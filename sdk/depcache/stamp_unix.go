//go:build unix

package depcache

import (
	"io/fs"
	"syscall"
)

// sysStamp returns fi's change time, device and inode.
func sysStamp(fi fs.FileInfo) (change int64, dev, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, 0
	}
	return ctime(st), uint64(st.Dev), uint64(st.Ino)
}
