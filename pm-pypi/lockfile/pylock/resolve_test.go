package pylock

import (
	"os"
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

// FuzzResolve checks that Resolve answers for every name a parsed lock
// holds, and for one it does not, without panicking, and only with
// candidates when the lock names the package.
func FuzzResolve(f *testing.F) {
	data, _ := os.ReadFile("testdata/pylock.toml")
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
