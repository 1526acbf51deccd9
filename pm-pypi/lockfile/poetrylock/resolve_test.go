package poetrylock

import (
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
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
	for _, tc := range []struct {
		name string
		want []lockfile.Locked
	}{
		{"requests", []lockfile.Locked{{Version: "2.31.0"}}},
		{"numpy", []lockfile.Locked{{Version: "1.26.4"}, {Version: "2.1.0"}}},
		{"absent", nil},
	} {
		if got := l.Resolve(tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Resolve(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
