//go:build !unix

package atomicfile

// syncDir does nothing where a directory cannot be opened for flushing
// (Windows commits a rename's metadata itself).
func syncDir(string) {}
