//go:build !linux

package pmserver

import "io"

// growPipe is a no-op where pipes cannot be grown.
func growPipe(io.Writer, int64) {}
