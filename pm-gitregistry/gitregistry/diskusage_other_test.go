//go:build !unix

package gitregistry_test

import "io/fs"

// allocated returns the file's size: blocks and links are not known here.
func allocated(fi fs.FileInfo) (size int64, dev, ino, links uint64) {
	return fi.Size(), 0, 0, 1
}
