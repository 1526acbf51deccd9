//go:build !linux

package discovery

// pathStats looks at the paths offers name; here each one whole.
type pathStats struct{}

func (*pathStats) lstat(path string) (link bool, err error) { return lstatWhole(path) }

func (*pathStats) close() {}
