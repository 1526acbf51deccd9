package pipfilelock

import (
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/internal/locktest"
)

func TestResolve(t *testing.T) {
	l, err := Parse([]byte(`{"_meta": {"pipfile-spec": 6},
 "default": {"Requests": {"version": "==2.31.0"}, "mylib": {"editable": true, "path": "./mylib"}},
 "develop": {"requests": {"version": "==2.32.0"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	locktest.Resolve(t, l, map[string][]lockfile.Locked{
		// Every category that locks it, in category order.
		"requests": []lockfile.Locked{{Version: "2.31.0"}, {Version: "2.32.0"}},
		// A path entry records no version.
		"mylib":  []lockfile.Locked{{Version: ""}},
		"absent": nil,
	})
}

// FuzzResolve checks that Resolve answers for every name a parsed lock
// holds, and for one it does not, without panicking, and only with
// candidates when the lock names the package.
func FuzzResolve(f *testing.F) {
	locktest.FuzzResolve(f, Parse, func(l *Lock) []string {
		return locktest.Names(l.Packages, func(p Package) string { return p.Name })
	}, locktest.ReadFile(f, "testdata/Pipfile.lock"))
}
