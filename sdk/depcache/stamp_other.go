//go:build !unix

package depcache

import "io/fs"

// sysStamp reports no change time or file identity where the system's
// stat does not give them portably; size and modification time remain.
func sysStamp(fs.FileInfo) (change int64, dev, ino uint64) { return 0, 0, 0 }
