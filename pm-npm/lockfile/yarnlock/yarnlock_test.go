package yarnlock

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

func load(t *testing.T, name string) *Lock {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestResolve(t *testing.T) {
	for _, file := range []string{"v1.lock", "berry.lock"} {
		l := load(t, file)
		for _, tc := range []struct {
			name, spec string
			want       lockfile.Resolution
			ok         bool
		}{
			{"left", "^1.1.0", lockfile.Resolution{Name: "left", Version: "1.2.0"}, true},
			{"@babel/code-frame", "^7.0.0", lockfile.Resolution{Name: "@babel/code-frame", Version: "7.12.13"}, true},
			{"lefty", "npm:left@1.0.0", lockfile.Resolution{Name: "left", Version: "1.0.0"}, true},
			{"left", "^9", lockfile.Resolution{}, false},
		} {
			got, ok := l.Resolve("", tc.name, tc.spec)
			if ok != tc.ok || got != tc.want {
				t.Errorf("%s: Resolve(%q, %q) = %+v, %v; want %+v, %v", file, tc.name, tc.spec, got, ok, tc.want, tc.ok)
			}
		}
	}
	if l := load(t, "berry.lock"); !l.Berry || l.MetadataVersion != 6 {
		t.Errorf("berry metadata: %v %d", l.Berry, l.MetadataVersion)
	}
	got, ok := load(t, "berry.lock").Resolve("", "ws-b", "workspace:^")
	if !ok || got.Link != "packages/b" {
		t.Errorf("workspace entry: %+v %v", got, ok)
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{"# yarn lockfile v1\n  version \"1\"\n", "# yarn lockfile v1\nfoo@1\n", "# yarn lockfile v1\n\"unterminated:\n", "__metadata:\n  version: [\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.lock"))
	for _, s := range seeds {
		data, _ := os.ReadFile(s)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			return
		}
		l.Resolve("", "left", "^1.0.0")
		l.Resolve("", "x", "npm:@s/y@1")
		l.Resolve("a", "x", "link:../z")
	})
}

// TestResolveV1TarballURL: a v1 entry for a dependency declared with a
// registry tarball URL under another name ("ms-url": "https://…/ms-2.0.0.tgz")
// installs the package the URL names, as npm reports it; a URL of another
// shape keeps the declared name, which is all the lock tells.
func TestResolveV1TarballURL(t *testing.T) {
	lock := `# yarn lockfile v1


"left-url@http://127.0.0.1:4000/left/-/left-1.1.0.tgz":
  version "1.1.0"
  resolved "http://127.0.0.1:4000/left/-/left-1.1.0.tgz#262f9bad176faed7340299054c0506d9aafb3571"

"widget-url@https://r.example/@acme/widget/-/widget-0.4.0.tgz":
  version "0.4.0"
  resolved "https://r.example/@acme/widget/-/widget-0.4.0.tgz"

"other@https://files.example/pkg.tgz":
  version "3.0.0"
  resolved "https://files.example/pkg.tgz#abc"

"mismatch@https://r.example/left/-/left-9.9.9.tgz":
  version "1.0.0"
  resolved "https://r.example/left/-/left-9.9.9.tgz"
`
	l, err := Parse([]byte(lock))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec string
		want       lockfile.Resolution
	}{
		{"left-url", "http://127.0.0.1:4000/left/-/left-1.1.0.tgz", lockfile.Resolution{Name: "left", Version: "1.1.0"}},
		{"widget-url", "https://r.example/@acme/widget/-/widget-0.4.0.tgz", lockfile.Resolution{Name: "@acme/widget", Version: "0.4.0"}},
		{"other", "https://files.example/pkg.tgz", lockfile.Resolution{Name: "other", Version: "3.0.0"}},
		{"mismatch", "https://r.example/left/-/left-9.9.9.tgz", lockfile.Resolution{Name: "mismatch", Version: "1.0.0"}},
	} {
		got, ok := l.Resolve("", tc.name, tc.spec)
		if !ok || got != tc.want {
			t.Errorf("Resolve(%q, %q) = %+v, %v; want %+v", tc.name, tc.spec, got, ok, tc.want)
		}
	}
}
