package poetrylock

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/internal/locktest"
)

// TestResolve: a name locked at several versions comes with each entry's
// markers, as lock-version 2.1 writes them.
func TestResolve(t *testing.T) {
	l, err := Parse([]byte(`[[package]]
name = "Requests"
version = "2.31.0"
markers = "python_version >= \"3.8\""

[[package]]
name = "numpy"
version = "1.26.4"
markers = "python_version < \"3.10\""

[[package]]
name = "numpy"
version = "2.1.0"
markers = {main = "python_version >= \"3.10\"", dev = "sys_platform == \"linux\""}

[[package]]
name = "click"
version = "8.1.0"
markers = {main = "python_version < \"3.9\"", dev = ""}

[[package]]
name = "click"
version = "8.2.0"

[metadata]
lock-version = "2.1"
`))
	if err != nil {
		t.Fatal(err)
	}
	locktest.Resolve(t, l, map[string][]lockfile.Locked{
		// Locked once: no markers, whatever the entry says.
		"requests": []lockfile.Locked{{Version: "2.31.0"}},
		// lock-version 2.1's markers, a string or one per group (by group
		// name); a group installing it everywhere means no markers.
		"numpy":  []lockfile.Locked{{Version: "1.26.4", Markers: []string{`python_version < "3.10"`}}, {Version: "2.1.0", Markers: []string{`sys_platform == "linux"`, `python_version >= "3.10"`}}},
		"click":  []lockfile.Locked{{Version: "8.1.0"}, {Version: "8.2.0"}},
		"absent": nil,
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
