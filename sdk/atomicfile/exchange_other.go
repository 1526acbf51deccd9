//go:build !linux

package atomicfile

import "errors"

// exchange is not available here.
func exchange(a, b string) error { return errors.ErrUnsupported }
