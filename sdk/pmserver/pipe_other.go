//go:build !linux

package pmserver

import "io"

// growPipe is a no-op where pipes cannot be grown.
func growPipe(io.Writer, int64) {}

// spliceRegion never splices where there is no splice(2): the caller
// writes the region itself.
func spliceRegion(io.Writer, io.ReaderAt, int64, int64) (int64, bool, error) { return 0, false, nil }
