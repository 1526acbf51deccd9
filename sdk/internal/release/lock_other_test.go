//go:build !unix

package release

import "testing"

// sharedModCache reports that no shared module cache is used: each run
// unpacks the public modules into a temporary one.
func sharedModCache(t *testing.T) (string, bool) { return "", false }
