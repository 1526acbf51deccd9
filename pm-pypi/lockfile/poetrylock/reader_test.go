package poetrylock

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/internal/locktest"
)

// TestParseReader checks that reading a lockfile a table at a time from
// the file gives what Parse gives from its bytes, for every test file.
func TestParseReader(t *testing.T) { locktest.CheckReader(t, Parse, ParseReader) }
