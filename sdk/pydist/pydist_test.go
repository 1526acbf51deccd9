package pydist

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestParseEntryPoints(t *testing.T) {
	g, err := ParseEntryPoints([]byte("# c\n[console_scripts]\nfoo = foo.cli:main\n\n[symposium]\nplugin = foo_plugin.data:x [extra]\n; c\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g["console_scripts"]) != 1 || g[EntryPointGroup][0].Module() != "foo_plugin.data" || g[EntryPointGroup][0].Line != 6 {
		t.Errorf("%+v", g)
	}
	for _, tc := range []struct {
		in   string
		line int
	}{
		{"x = y\n", 1},
		{"[a\n", 1},
		{"[a]\nnovalue\n", 2},
		// A bad line in another group spoils the whole file, the
		// symposium group included.
		{"[symposium]\np = pkg\n[console_scripts]\nbroken\n", 4},
	} {
		g, err := ParseEntryPoints([]byte(tc.in))
		var ee *EntryPointsError
		if !errors.As(err, &ee) || ee.Line != tc.line || g != nil {
			t.Errorf("ParseEntryPoints(%q) = %v, %v; want an error on line %d", tc.in, g, err, tc.line)
		}
	}
}

func TestModuleDir(t *testing.T) {
	for _, tc := range []struct {
		module, want string
		ok           bool
	}{
		{"pkg", "pkg", true},
		{"pkg.sub", filepath.Join("pkg", "sub"), true},
		{"", "", false},
		{"..pkg", "", false},
		{"/abs", "", false},
	} {
		got, ok := ModuleDir(tc.module)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ModuleDir(%q) = %q, %v; want %q, %v", tc.module, got, ok, tc.want, tc.ok)
		}
	}
}

func TestParseRecord(t *testing.T) {
	rec, err := ParseRecord([]byte("foo/__init__.py,sha256=abc,12\nfoo/data/SKILL.md,,\nfoo-1.0.dist-info/RECORD,,\n../../bin/foo,sha256=x,3\n\"bar,baz/x.py\",,\nfoo.data/scripts/x,,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rec) != 6 || rec[0].Size != 12 || rec[1].Size != -1 || rec[4].Path != "bar,baz/x.py" {
		t.Errorf("%+v", rec)
	}
	if got := TopLevel(rec); !slices.Equal(got, []string{"foo", "bar,baz"}) {
		t.Errorf("TopLevel = %q", got)
	}
	if _, err := ParseRecord([]byte("a,b,-1\n")); err == nil {
		t.Error("negative size accepted")
	}
	// An absolute path is outside site-packages: it names no top-level
	// package (an empty one would make site-packages itself a package).
	if got := TopLevel([]RecordEntry{{Path: "/etc/x", Size: -1}, {Path: "//y/z", Size: -1}, {Path: "pkg/a.py", Size: -1}}); !slices.Equal(got, []string{"pkg"}) {
		t.Errorf("TopLevel with absolute paths = %q", got)
	}
}

// TestReadTopLevel: RECORD when it parses whole and installs a package,
// else top_level.txt; what could not be read is reported, what is absent
// is not.
func TestReadTopLevel(t *testing.T) {
	for _, tc := range []struct {
		name        string
		files       map[string]string // "" + "dir:" makes a directory
		want        []string
		listed      bool
		recordErr   bool
		topLevelErr bool
	}{
		{"RECORD", map[string]string{RecordFile: "pkg/__init__.py,,\npkg/SYMPOSIUM.toml,,\nother/x.py,,\npkg-1.0.dist-info/RECORD,,\n", TopLevelFile: "ignored\n"}, []string{"pkg", "other"}, true, false, false},
		{"RECORD with a bad size: top_level.txt", map[string]string{RecordFile: "pkg/__init__.py,,x\n", TopLevelFile: "fromtxt\n"}, []string{"fromtxt"}, true, false, false},
		{"RECORD not CSV: top_level.txt", map[string]string{RecordFile: "\"pkg/__init__.py,,\n", TopLevelFile: "fromtxt\n"}, []string{"fromtxt"}, true, false, false},
		{"RECORD installs no package: top_level.txt", map[string]string{RecordFile: "mod.py,,\n../../bin/x,,\n", TopLevelFile: "mod\n"}, []string{"mod"}, true, false, false},
		{"no RECORD", map[string]string{TopLevelFile: "a\nb a\n../x\nc/d\n.\n"}, []string{"a", "b"}, true, false, false},
		{"nothing", map[string]string{}, nil, false, false, false},
		{"RECORD a directory", map[string]string{RecordFile + "/x": "", TopLevelFile: "t\n"}, []string{"t"}, true, true, false},
		{"top_level.txt a directory", map[string]string{TopLevelFile + "/x": ""}, nil, false, false, true},
		{"RECORD absolute paths only", map[string]string{RecordFile: "/usr/lib/x.py,,\n", TopLevelFile: "t\n"}, []string{"t"}, true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			di := t.TempDir()
			for name, data := range tc.files {
				p := filepath.Join(di, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got := ReadTopLevel(di)
			if !slices.Equal(got.Names, tc.want) || got.Listed != tc.listed || (got.RecordErr != nil) != tc.recordErr || (got.TopLevelErr != nil) != tc.topLevelErr {
				t.Errorf("ReadTopLevel = %+v; want names %q, listed %v, RECORD error %v, top_level.txt error %v", got, tc.want, tc.listed, tc.recordErr, tc.topLevelErr)
			}
		})
	}
}

// TestReadTopLevelLinkOut: a RECORD that is a link out of the dist-info
// directory is not read, and is reported.
func TestReadTopLevelLinkOut(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(dir, "outside")
	if err := os.WriteFile(outside, []byte("evil/x.py,,\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	di := filepath.Join(dir, "pkg-1.0.dist-info")
	if err := os.Mkdir(di, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(di, RecordFile)); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	got := ReadTopLevel(di)
	if len(got.Names) != 0 || got.RecordErr == nil || errors.Is(got.RecordErr, fs.ErrNotExist) {
		t.Errorf("ReadTopLevel through a link out = %+v; want no names and an error", got)
	}
}

func FuzzParseEntryPoints(f *testing.F) {
	f.Add([]byte("[symposium]\np = x.y:z\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseEntryPoints(b)
		if err == nil {
			for _, eps := range g {
				for _, e := range eps {
					if rel, ok := ModuleDir(e.Module()); ok && !filepath.IsLocal(rel) {
						t.Fatalf("ModuleDir(%q) = %q, not local", e.Module(), rel)
					}
				}
			}
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	f.Add([]byte("a/b.py,sha256=x,1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if rec, err := ParseRecord(b); err == nil {
			for _, top := range TopLevel(rec) {
				if top == "" || top == "." || top == ".." || strings.Contains(top, "/") {
					t.Fatalf("TopLevel(%q) returned %q", b, top)
				}
			}
		}
	})
}
