package cli

import (
	"os"
	"runtime"
)

// discoverProcs is the GOMAXPROCS discover runs the host with. The host's
// own work (decoding answers, validating offers, walking the skills of
// enabled plugins) is one sequential pass, while the PMs, separate
// processes, run beside it: on the 2-core machine it was measured on, with
// one processor the host left more of the machine to its PMs, and discover
// came closer to its slowest PM than with two (discovery's
// BenchmarkDiscoverCombined with -cpu 1,2). GOMAXPROCS set in the
// environment wins.
const discoverProcs = 1

// limitProcs sets GOMAXPROCS to n unless the environment sets it, and
// returns the function that puts it back.
func limitProcs(n int) (restore func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(n)
	return func() { runtime.GOMAXPROCS(prev) }
}
