package pipfilelock

import (
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
