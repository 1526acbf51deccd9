package poetrylock

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/internal/locktest"
)

func TestResolve(t *testing.T) {
	l, err := Parse([]byte(`[[package]]
name = "Requests"
version = "2.31.0"

[[package]]
name = "numpy"
version = "1.26.4"

[[package]]
name = "numpy"
version = "2.1.0"

[metadata]
lock-version = "2.1"
`))
	if err != nil {
		t.Fatal(err)
	}
	locktest.Resolve(t, l, map[string][]lockfile.Locked{
		"requests": []lockfile.Locked{{Version: "2.31.0"}},
		"numpy":    []lockfile.Locked{{Version: "1.26.4"}, {Version: "2.1.0"}},
		"absent":   nil,
	})
}

// FuzzResolve checks that Resolve answers for every name a parsed lock
// holds, and for one it does not, without panicking, and only with
// candidates when the lock names the package.
func FuzzResolve(f *testing.F) {
	locktest.FuzzResolve(f, Parse, func(l *Lock) []string {
		return locktest.Names(l.Packages, func(p Package) string { return p.Name })
	}, locktest.ReadFile(f, "testdata/poetry-2.1.lock"))
}
