package pnpmlock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/lockfile"
)

func TestParseVersion(t *testing.T) {
	for _, tc := range []struct {
		lv, importer, name, ref string
		want                    lockfile.Resolution
	}{
		{"5.4", "", "a", "1.2.3", lockfile.Resolution{Name: "a", Version: "1.2.3"}},
		{"5.4", "", "a", "1.2.3_react@17.0.2+@types+react@17.0.1", lockfile.Resolution{Name: "a", Version: "1.2.3"}},
		{"5.3", "", "x", "/real/1.0.0", lockfile.Resolution{Name: "real", Version: "1.0.0"}},
		{"5.4", "", "x", "/@scope/real/1.0.0-beta.1_peer@1.0.0", lockfile.Resolution{Name: "@scope/real", Version: "1.0.0-beta.1"}},
		{"6.0", "", "a", "1.2.3(react@18.0.0)(b@1.0.0)", lockfile.Resolution{Name: "a", Version: "1.2.3"}},
		{"6.0", "", "x", "/@scope/real@1.0.0(react@18.0.0)", lockfile.Resolution{Name: "@scope/real", Version: "1.0.0"}},
		{"9.0", "", "x", "real@2.0.0", lockfile.Resolution{Name: "real", Version: "2.0.0"}},
		{"9.0", "", "x", "@s/real@2.0.0(p@1)", lockfile.Resolution{Name: "@s/real", Version: "2.0.0"}},
		{"9.0", "packages/a", "b", "link:../b", lockfile.Resolution{Name: "b", Version: "link:../b", Link: "packages/b"}},
		{"9.0", "", "f", "file:vendor/f.tgz", lockfile.Resolution{Name: "f", Version: "file:vendor/f.tgz"}},
	} {
		if got := ParseVersion(tc.lv, tc.importer, tc.name, tc.ref); got != tc.want {
			t.Errorf("ParseVersion(%s, %q) = %+v, want %+v", tc.lv, tc.ref, got, tc.want)
		}
	}
}

func TestImporters(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "v9-workspace.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if l.LockfileVersion != "9.0" {
		t.Errorf("lockfileVersion %q", l.LockfileVersion)
	}
	for _, tc := range []struct {
		importer, name string
		want           lockfile.Resolution
		ok             bool
	}{
		{"", "typescript", lockfile.Resolution{Name: "typescript", Version: "5.4.5"}, true},
		{"packages/app", "left", lockfile.Resolution{Name: "left", Version: "1.3.0"}, true},
		{"packages/app", "lib", lockfile.Resolution{Name: "lib", Version: "link:../lib", Link: "packages/lib"}, true},
		{"packages/lib", "left", lockfile.Resolution{}, false},
	} {
		got, ok := l.Resolve(tc.importer, tc.name, "")
		if ok != tc.ok || got != tc.want {
			t.Errorf("Resolve(%q, %q) = %+v, %v; want %+v, %v", tc.importer, tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, bad := range []string{"importers: {}\n", "- a\n- b\n", "lockfileVersion: [1]\n", "lockfileVersion: '9.0'\nimporters: [\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) succeeded", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	for _, s := range seeds {
		data, _ := os.ReadFile(s)
		f.Add(data)
	}
	f.Add([]byte("lockfileVersion: 5.4\nspecifiers:\n  a: ^1\ndependencies:\n  a: 1.0.0_b@2\n"))
	f.Add([]byte("lockfileVersion: '9.0'\nimporters:\n  ./packages/a:\n    dependencies:\n      b:\n        specifier: link:../b\n        version: link:../b\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "invalid pnpm-lock.yaml") {
				t.Fatalf("error does not say which file is invalid: %v", err)
			}
			return
		}
		// Every dependency an importer records is found again from that
		// importer, and a link resolves to its target below the importer.
		for imp, deps := range l.Importers {
			for _, m := range []map[string]Dep{deps.Dependencies, deps.DevDependencies, deps.OptionalDependencies} {
				for name := range m {
					r, ok := l.Resolve(imp, name, "")
					if !ok {
						t.Fatalf("Resolve(%q, %q) found nothing for a dependency the lock records", imp, name)
					}
					if r.Link != "" && r.Link != lockfile.JoinRel("", r.Link) {
						t.Fatalf("Resolve(%q, %q) gave an uncleaned link %q", imp, name, r.Link)
					}
				}
			}
			if _, ok := l.Resolve(imp, "-not-a-name-", "^1"); ok {
				t.Fatalf("Resolve(%q) found a package the lock does not record", imp)
			}
		}
	})
}

// TestRemoteAndFileDeps: git, tarball and "file:" dependencies resolve to
// the name and version their "packages" entry records (a "file:" directory
// to the directory), in the 9.0 and 6.0 formats.
func TestRemoteAndFileDeps(t *testing.T) {
	for _, tc := range []struct {
		file, importer, name string
		want                 lockfile.Resolution
	}{
		{"v9-remote.yaml", "", "pkg", lockfile.Resolution{Name: "pkg", Version: "5.7.0"}},
		{"v9-remote.yaml", "", "ms-url", lockfile.Resolution{Name: "ms", Version: "2.0.0"}},
		{"v9-remote.yaml", "", "ms-file", lockfile.Resolution{Name: "ms", Version: "2.0.0"}},
		{"v9-remote.yaml", "", "loc", lockfile.Resolution{Name: "loc", Link: "localdir"}},
		{"v9-remote.yaml", "", "react-thing", lockfile.Resolution{Name: "react-thing", Version: "1.4.0"}},
		{"v9-remote.yaml", "packages/a", "loc2", lockfile.Resolution{Name: "loc2", Link: "localdir"}},
		{"v6-git.yaml", "", "pkg", lockfile.Resolution{Name: "pkg", Version: "5.7.0"}},
		{"v6-git.yaml", "", "ms-url", lockfile.Resolution{Name: "ms", Version: "2.0.0"}},
	} {
		data, err := os.ReadFile(filepath.Join("testdata", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		l, err := Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := l.Resolve(tc.importer, tc.name, ""); !ok || got != tc.want {
			t.Errorf("%s: Resolve(%q, %q) = %+v, %v; want %+v", tc.file, tc.importer, tc.name, got, ok, tc.want)
		}
	}
}
