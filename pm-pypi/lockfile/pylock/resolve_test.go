package pylock

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/internal/locktest"
)

func TestResolve(t *testing.T) {
	l, err := Parse([]byte(`lock-version = "1.0"
created-by = "test"

[[packages]]
name = "Colorama"
version = "0.4.6"
marker = "sys_platform == 'win32'"

[[packages]]
name = "numpy"
version = "1.26.4"
marker = "python_version < '3.12'"

[[packages]]
name = "numpy"
version = "2.1.0"
marker = "python_version >= '3.12'"
`))
	if err != nil {
		t.Fatal(err)
	}
	locktest.Resolve(t, l, map[string][]lockfile.Locked{
		"numpy": []lockfile.Locked{
			{Version: "1.26.4", Markers: []string{"python_version < '3.12'"}},
			{Version: "2.1.0", Markers: []string{"python_version >= '3.12'"}},
		},
		// One entry: no markers, as the lock installs it wherever it is required.
		"colorama": []lockfile.Locked{{Version: "0.4.6"}},
		"absent":   nil,
	})
}

// FuzzResolve checks that Resolve answers for every name a parsed lock
// holds, and for one it does not, without panicking, and only with
// candidates when the lock names the package.
func FuzzResolve(f *testing.F) {
	locktest.FuzzResolve(f, Parse, func(l *Lock) []string {
		return locktest.Names(l.Packages, func(p Package) string { return p.Name })
	}, locktest.ReadFile(f, "testdata/pylock.toml"))
}
