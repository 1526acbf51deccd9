//go:build !unix

package gitregistry

import "io/fs"

// inode returns 0: stamps rely on the modification time alone here.
func inode(fs.FileInfo) uint64 { return 0 }
