package pipfilelock

import (
	"os"
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
)

func TestResolve(t *testing.T) {
	l, err := Parse([]byte(`{"_meta": {"pipfile-spec": 6},
 "default": {"Requests": {"version": "==2.31.0"}, "mylib": {"editable": true, "path": "./mylib"}},
 "develop": {"requests": {"version": "==2.32.0"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want []lockfile.Locked
	}{
		// Every category that locks it, in category order.
		{"requests", []lockfile.Locked{{Version: "2.31.0"}, {Version: "2.32.0"}}},
		// A path entry records no version.
		{"mylib", []lockfile.Locked{{Version: ""}}},
		{"absent", nil},
	} {
		if got := l.Resolve(tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Resolve(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// FuzzResolve checks that Resolve answers for every name a parsed lock
// holds, and for one it does not, without panicking, and only with
// candidates when the lock names the package.
func FuzzResolve(f *testing.F) {
	data, _ := os.ReadFile("testdata/Pipfile.lock")
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := Parse(b)
		if err != nil {
			return
		}
		for _, p := range l.Packages {
			if len(l.Resolve(p.Name)) == 0 && p.Name != "" {
				t.Errorf("Resolve(%q) found nothing for a locked package", p.Name)
			}
		}
		if got := l.Resolve("-not-a-name-"); got != nil {
			t.Errorf("Resolve of an absent name = %+v", got)
		}
	})
}
