//go:build !linux

package depcache

// statter takes stamps; here, one Take per path.
type statter struct{}

func newStatter() *statter { return &statter{} }

func (*statter) take(path string) Stamp { return Take(path) }

func (*statter) close() {}
