package pylock

import (
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
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
	for _, tc := range []struct {
		name string
		want []lockfile.Locked
	}{
		{"numpy", []lockfile.Locked{
			{Version: "1.26.4", Markers: []string{"python_version < '3.12'"}},
			{Version: "2.1.0", Markers: []string{"python_version >= '3.12'"}},
		}},
		// One entry: no markers, as the lock installs it wherever it is required.
		{"colorama", []lockfile.Locked{{Version: "0.4.6"}}},
		{"absent", nil},
	} {
		if got := l.Resolve(tc.name); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Resolve(%q) = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
