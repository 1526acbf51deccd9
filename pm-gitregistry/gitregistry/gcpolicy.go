package gitregistry

import (
	"os"
	"runtime/debug"
)

// The garbage collector's policy for the PM's process. A hook is one
// short-lived process whose largest allocations are the kept answer read
// from the index and the response the harness writes, a few MiB each at
// 10,000 entries: with Go's default (a collection whenever the heap
// doubles from 4 MiB), the hook collects once for nothing it would ever
// free before exiting, and the collector's workers spin waiting for the
// goroutine copying the answer (a third of the hook's CPU time, measured
// with perf at 10,000 entries). So collections start only once the heap
// has grown ninefold, and a soft memory limit keeps a long refresh (a
// fetch of a large repository) from growing without bound: near it the
// collector works as hard as it must. GOGC and GOMEMLIMIT, when set, are
// left as the user set them.
const (
	gcPercent   = 800
	memoryLimit = 512 << 20
)

// setGCPolicy applies the policy above to the process.
func setGCPolicy() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
}
