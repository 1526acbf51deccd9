//go:build !linux

package acquire

import "errors"

// exchange is not available here: place falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
