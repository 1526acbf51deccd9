package venv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindAndLookup(t *testing.T) {
	ws := t.TempDir()
	site := filepath.Join(ws, ".venv", "lib", "python3.12", "site-packages")
	write := func(rel, body string) {
		p := filepath.Join(site, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(body), 0o644)
	}
	write("zope.interface-6.0.dist-info/METADATA", "Name: zope.interface\nVersion: 6.0\nSummary: Interfaces\n\nbody\n")
	write("old-style-name-1.0.dist-info/METADATA", "Name: old-style-name\nVersion: 1.0\n")
	write("Foo_Bar-2.0.dist-info/METADATA", "Name: Foo_Bar\nVersion: 2.0\n")
	write("liar-1.0.dist-info/METADATA", "Name: somebody-else\nVersion: 1.0\n")
	write("broken-1.0.dist-info/METADATA", "no headers here\n")
	write("foo_bar/__init__.py", "")
	write("Foo_Bar-2.0.dist-info/RECORD", "foo_bar/__init__.py,,\nFoo_Bar-2.0.dist-info/METADATA,,\n../../../bin/foo,,\n")
	write("Foo_Bar-2.0.dist-info/direct_url.json", `{"url": "file:///src/foo", "dir_info": {"editable": true}}`)

	env := Find(ws, func(string) string { return "" })
	if env == nil || len(env.SitePackages) != 1 {
		t.Fatalf("Find: %+v", env)
	}
	got, passed := env.LookupAll([]string{"Zope_Interface", "old.style.name", "foo-bar", "liar", "broken", "absent"})
	if len(got) != 3 || got["zope-interface"].Version != "6.0" || got["zope-interface"].Summary != "Interfaces" ||
		got["old-style-name"].Version != "1.0" || got["foo-bar"].Version != "2.0" {
		t.Errorf("LookupAll: %+v", got)
	}
	// The candidates whose METADATA does not name them are passed over,
	// and said so.
	sp := env.SitePackages[0]
	if len(passed) != 2 ||
		passed[0].Name != "broken" || passed[0].DistInfo != filepath.Join(sp, "broken-1.0.dist-info") || passed[0].Err == nil ||
		passed[1].Name != "liar" || passed[1].DistInfo != filepath.Join(sp, "liar-1.0.dist-info") ||
		passed[1].Err == nil || passed[1].Err.Error() != `METADATA names "somebody-else"` {
		t.Errorf("LookupAll passed over %+v", passed)
	}
	if _, passed := env.LookupAll([]string{"zope-interface"}); passed != nil {
		t.Errorf("LookupAll passed over %+v, want nil", passed)
	}
	d := got["foo-bar"]
	if d.SourceTree() != filepath.FromSlash("/src/foo") {
		t.Errorf("SourceTree %q", d.SourceTree())
	}
	all, err := env.Dists()
	if err != nil || len(all) != 4 {
		t.Errorf("Dists: %+v %v", all, err)
	}
	// VIRTUAL_ENV is the last resort.
	other := t.TempDir()
	os.MkdirAll(filepath.Join(other, "lib", "python3.11", "site-packages"), 0o755)
	if e := Find(t.TempDir(), func(k string) string { return map[string]string{"VIRTUAL_ENV": other}[k] }); e == nil || e.Root != other {
		t.Errorf("VIRTUAL_ENV: %+v", e)
	}
	if Find(t.TempDir(), func(string) string { return "" }) != nil {
		t.Error("found a virtualenv where there is none")
	}
}

func TestPythonVersion(t *testing.T) {
	for body, want := range map[string]string{
		"home = /usr/bin\nversion = 3.11.7\n":                     "3.11.7",
		"home = /usr/bin\nversion_info = 3.12.1.final.0\n":        "3.12.1",
		"version_info = 3.12.1.final.0\nversion = 3.12.1\n":       "3.12.1",
		"home = /usr/bin\ninclude-system-site-packages = false\n": "",
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "pyvenv.cfg"), []byte(body), 0o644)
		if got := PythonVersion(dir); got != want {
			t.Errorf("%q: got %q, want %q", body, got, want)
		}
	}
	if PythonVersion(t.TempDir()) != "" {
		t.Error("no pyvenv.cfg")
	}
}
