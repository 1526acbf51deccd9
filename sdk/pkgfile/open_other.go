//go:build !unix

package pkgfile

// openNonblock is 0 where FIFOs cannot be opened by name.
const openNonblock = 0
