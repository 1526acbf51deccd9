package uvlock

import (
	"os"
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile"
	"github.com/symposium-dev/symposium-pm/pm-pypi/lockfile/internal/locktest"
)

// forked locks numpy twice, split by the Python version; the root project
// references both with their markers.
const forked = `version = 1
revision = 2
resolution-markers = ["python_full_version >= '3.12'", "python_full_version < '3.12'"]

[[package]]
name = "app"
version = "0.1.0"
source = { virtual = "." }
dependencies = [
    { name = "numpy", version = "1.26.4", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version < '3.12'" },
    { name = "numpy", version = "2.1.0", source = { registry = "https://pypi.org/simple" }, marker = "python_full_version >= '3.12'" },
    { name = "scipy" },
]

[[package]]
name = "numpy"
version = "1.26.4"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version < '3.12'"]

[[package]]
name = "numpy"
version = "2.1.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.12'"]

[[package]]
name = "scipy"
version = "1.13.0"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["python_full_version >= '3.12'"]

[[package]]
name = "tzdata"
version = "2024.1"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["sys_platform == 'win32'"]

[[package]]
name = "tzdata"
version = "2023.4"
source = { registry = "https://pypi.org/simple" }
resolution-markers = ["sys_platform != 'win32'"]
`

func TestResolve(t *testing.T) {
	l, err := Parse([]byte(forked))
	if err != nil {
		t.Fatal(err)
	}
	locktest.Resolve(t, l, map[string][]lockfile.Locked{
		// Several versions: the root project's references, with their markers.
		"numpy": []lockfile.Locked{
			{Version: "1.26.4", Markers: []string{"python_full_version < '3.12'"}},
			{Version: "2.1.0", Markers: []string{"python_full_version >= '3.12'"}},
		},
		// One version: no markers, whatever its resolution-markers.
		"scipy": []lockfile.Locked{{Version: "1.13.0"}},
		// Several versions nobody in the workspace names: their resolution-markers.
		"tzdata": []lockfile.Locked{
			{Version: "2024.1", Markers: []string{"sys_platform == 'win32'"}},
			{Version: "2023.4", Markers: []string{"sys_platform != 'win32'"}},
		},
		// The root project is the workspace, not a dependency.
		"app":    nil,
		"absent": nil,
	})
}

func TestWorkspace(t *testing.T) {
	data, err := os.ReadFile("testdata/uv.lock")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := lockfile.Workspace{
		Members: []string{"app", "app-lib"},
		Sources: []lockfile.Source{{Name: "app-lib", Path: "packages/lib"}},
	}
	if got := l.Workspace(); !reflect.DeepEqual(got, want) {
		t.Errorf("Workspace() = %+v, want %+v", got, want)
	}
	if got := l.Resolve("app-lib"); !reflect.DeepEqual(got, []lockfile.Locked{{Version: "0.2.0"}}) {
		t.Errorf("Resolve(app-lib) = %+v", got)
	}
}

// FuzzResolve checks that Resolve answers for every name a parsed lock
// holds, and for one it does not, without panicking, and only with
// candidates when the lock names the package (the root project is the
// workspace, not a locked package).
func FuzzResolve(f *testing.F) {
	locktest.FuzzResolve(f, Parse, func(l *Lock) []string {
		var names []string
		for _, p := range l.Packages {
			if !p.IsRoot() {
				names = append(names, p.Name)
			}
		}
		return names
	}, locktest.ReadFile(f, "testdata/uv.lock"), []byte(forked))
}
