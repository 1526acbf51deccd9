package distinfo

import (
	"slices"
	"strings"
	"testing"
)

func TestParseMetadata(t *testing.T) {
	m, err := ParseMetadata([]byte("Metadata-Version: 2.1\r\nname: Foo.Bar\nVersion: 1.0\nVersion: 9.9\nSummary: A thing\n  that folds\n" +
		"Requires-Dist: requests>=2\nRequires-Dist: rich ; extra == 'x'\nRequires-Python: >=3.8\n\nSummary: body text\n"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "Foo.Bar" || m.Normalized() != "foo-bar" || m.Version != "1.0" || m.Summary != "A thing that folds" ||
		len(m.RequiresDist) != 2 || m.RequiresPython != ">=3.8" {
		t.Errorf("%+v", m)
	}
	if m, _ := ParseMetadata([]byte("Name: x\nVersion: 1\nSummary: UNKNOWN\n")); m.Summary != "" {
		t.Errorf("UNKNOWN summary kept: %q", m.Summary)
	}
	for _, bad := range []string{"", "Version: 1\n", "Name: x\n", "Name: -x\nVersion: 1\n"} {
		if _, err := ParseMetadata([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func TestParseEntryPoints(t *testing.T) {
	g, err := ParseEntryPoints([]byte("# c\n[console_scripts]\nfoo = foo.cli:main\n\n[symposium]\nplugin = foo_plugin.data:x [extra]\n; c\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g["console_scripts"]) != 1 || g["symposium"][0].Module() != "foo_plugin.data" {
		t.Errorf("%+v", g)
	}
	for _, bad := range []string{"x = y\n", "[a\n", "[a]\nnovalue\n"} {
		if _, err := ParseEntryPoints([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
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

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("Name: a\nVersion: 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = ParseMetadata(b) })
}

func FuzzParseEntryPoints(f *testing.F) {
	f.Add([]byte("[symposium]\np = x.y:z\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseEntryPoints(b)
		if err == nil {
			for _, eps := range g {
				for _, e := range eps {
					_ = e.Module()
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
