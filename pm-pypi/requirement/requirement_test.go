package requirement

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in                      string
		name, spec, url, marker string
		extras                  []string
		pin                     string
	}{
		{in: "requests", name: "requests"},
		{in: "requests[socks,security] >= 2.8.1, == 2.8.* ; python_version < \"2.7\"", name: "requests",
			extras: []string{"socks", "security"}, spec: ">=2.8.1,==2.8.*", marker: `python_version < "2.7"`},
		{in: "Django==4.2.1", name: "Django", spec: "==4.2.1", pin: "4.2.1"},
		{in: "foo (>=1.0, <2)", name: "foo", spec: ">=1.0,<2"},
		{in: "foo===1.0.0-custom", name: "foo", spec: "===1.0.0-custom", pin: "1.0.0-custom"},
		{in: "foo==1.0.0.0", name: "foo", spec: "==1.0.0.0", pin: "1.0.0.0"},
		{in: "foo==v1.0RC1", name: "foo", spec: "==v1.0RC1", pin: "1.0rc1"},
		{in: "pip @ https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee ; python_version >= '3'", name: "pip",
			url: "https://github.com/pypa/pip/archive/1.3.1.zip#sha1=da9234ee", marker: "python_version >= '3'"},
		{in: "name@file:///x/y", name: "name", url: "file:///x/y"},
		{in: "zope.interface~=5.0", name: "zope.interface", spec: "~=5.0"},
		{in: "a[]", name: "a"},
	} {
		r, err := Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if r.Name != tc.name || r.Specifier != tc.spec || r.URL != tc.url || r.Marker != tc.marker || !slices.Equal(r.Extras, tc.extras) {
			t.Errorf("Parse(%q) = %+v", tc.in, r)
		}
		pin, ok := r.Pin()
		if pin != tc.pin || ok != (tc.pin != "") {
			t.Errorf("Parse(%q).Pin() = %q, %v; want %q", tc.in, pin, ok, tc.pin)
		}
		if _, err := Parse(r.String()); err != nil {
			t.Errorf("String() of %q does not re-parse: %q: %v", tc.in, r.String(), err)
		}
	}
	for _, bad := range []string{"", "-foo", "foo[bar", "foo >= 1.0 2", "foo @", "foo ; ", "foo=1.0", "foo @ http://x junk",
		"foo; (python_version", "foo (>=1", "foo[b@d]"} {
		if r, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted: %+v", bad, r)
		}
	}
}

func TestNameFromURL(t *testing.T) {
	for in, want := range map[string][2]string{
		"git+https://github.com/x/y.git#egg=MyPkg":                      {"MyPkg", ""},
		"https://files.example/packages/foo_bar-1.2.0-py3-none-any.whl": {"foo_bar", "1.2.0"},
		"./dist/baz-2.0.tar.gz":                                         {"baz", "2.0"},
		"file:///tmp/x#egg=thing[extra]&subdirectory=sub":               {"thing", ""},
		// A URL's file name is percent-encoded; pip decodes it (Link.filename).
		"https://download.pytorch.org/whl/cpu/torch-2.1.0%2Bcpu-cp311-cp311-linux_x86_64.whl": {"torch", "2.1.0+cpu"},
		"https://files.example/foo-1.0%2Blocal.tar.gz":                                        {"foo", "1.0+local"},
		// A local path is not: "%2B" there is what the file is called.
		"./dist/baz-2.0%2Bx.tar.gz": {"", ""},
	} {
		if want[0] == "" {
			if n, v, ok := NameFromURL(in); ok {
				t.Errorf("NameFromURL(%q) = %q %q, want no name", in, n, v)
			}
			continue
		}
		n, v, ok := NameFromURL(in)
		if !ok || n != want[0] || v != want[1] {
			t.Errorf("NameFromURL(%q) = %q %q %v", in, n, v, ok)
		}
	}
	if _, _, ok := NameFromURL("https://example.com/"); ok {
		t.Error("nameless URL named")
	}
}

func TestParseFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		t.Helper()
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("requirements.txt", `# top
-i https://user:secret@example.com/simple
--extra-index-url https://other.example/simple
-r sub/base.txt
-c constraints.txt
requests[socks]==2.31.0 \
    --hash=sha256:58cd2187c01e70e6e26505bca751777aa9f2ee0b7f4300988b709f44e013003f \
    --hash=sha256:942c5a758f98d790eaed1a29cb6eefc7ffb0d1cf7af05c3d2791656dbd6ad1e1
flask>=2 ; python_version >= "3.8"  # a comment
-e ./localpkg
-e git+https://github.com/x/y.git#egg=y-pkg
./wheels/foo_bar-1.2.0-py3-none-any.whl
numpy==${NUMPY_VERSION}
--no-index
this is not valid
`)
	write("sub/base.txt", "-r ../requirements.txt\nclick==8.1.7\n")
	write("constraints.txt", "flask==3.0.0\n")
	write("localpkg/pyproject.toml", "")
	f, err := ParseFile(filepath.Join(dir, "requirements.txt"), Options{
		ReadFile:    os.ReadFile,
		Getenv:      func(k string) string { return map[string]string{"NUMPY_VERSION": "1.26.4"}[k] },
		ProjectName: func(d string) string { return map[string]string{filepath.Join(dir, "localpkg"): "Local_Pkg"}[d] },
	})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		name, version    string
		editable, constr bool
		hashes           int
	}
	var got []row
	for _, e := range f.Entries {
		got = append(got, row{e.Name, e.Version, e.Editable, e.Constraint, len(e.Hashes)})
	}
	want := []row{
		{"click", "8.1.7", false, false, 0},
		{"flask", "3.0.0", false, true, 0},
		{"requests", "2.31.0", false, false, 2},
		{"flask", "", false, false, 0},
		{"local-pkg", "", true, false, 0},
		{"y-pkg", "", true, false, 0},
		{"foo-bar", "1.2.0", false, false, 0},
		{"numpy", "1.26.4", false, false, 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("entries:\n got %+v\nwant %+v", got, want)
	}
	if len(f.Files) != 3 {
		t.Errorf("files read: %v", f.Files)
	}
	if f.IndexURL != "https://user:secret@example.com/simple" || len(f.ExtraIndexURLs) != 1 {
		t.Errorf("index options: %q %q", f.IndexURL, f.ExtraIndexURLs)
	}
	if len(f.Problems) != 1 {
		t.Errorf("problems: %v", f.Problems)
	}
	if f.Entries[2].Line != 6 {
		t.Errorf("continued line number %d, want 6", f.Entries[2].Line)
	}
}

func TestParseFileUTF16(t *testing.T) {
	dir := t.TempDir()
	text := "attrs==23.1.0\r\n"
	b := []byte{0xFF, 0xFE}
	for _, r := range text {
		b = append(b, byte(r), 0)
	}
	p := filepath.Join(dir, "requirements.txt")
	os.WriteFile(p, b, 0o644)
	f, err := ParseFile(p, Options{ReadFile: os.ReadFile})
	if err != nil || len(f.Entries) != 1 || f.Entries[0].Version != "23.1.0" {
		t.Fatalf("%+v %v", f, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"requests[socks]>=2.8.1,==2.8.*;python_version<'2.7'", "pip @ https://x/y.zip ; os_name=='a'",
		"foo (>=1)", "a===b", "x[y, z]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			return
		}
		r2, err := Parse(r.String())
		if err != nil {
			t.Fatalf("%q parsed to %+v whose String %q does not parse: %v", s, r, r.String(), err)
		}
		if r2.Normalized() != r.Normalized() || r2.Specifier != r.Specifier {
			t.Fatalf("round trip changed %+v to %+v", r, r2)
		}
	})
}

func FuzzParseFile(f *testing.F) {
	f.Add("-r other.txt\nfoo==1 \\\n --hash=sha256:ab\n# c\n-e .#egg=x\n")
	f.Add("\xff\xfea\x00=\x00")
	f.Add("asdf==\nfoo6==1.0 --hash=sha256:ab trailing\nu @ https://x/1.0.zip\nfoo==1 -C bar\n")
	f.Fuzz(func(t *testing.T, body string) {
		files := map[string]string{"/r/requirements.txt": body, "/r/other.txt": body}
		_, _ = ParseFile("/r/requirements.txt", Options{ReadFile: func(p string) ([]byte, error) {
			if b, ok := files[p]; ok {
				return []byte(b), nil
			}
			return nil, os.ErrNotExist
		}})
	})
}

// TestParseRefusesMalformed: requirement strings packaging refuses (a
// marker that is not an expression over known variables, junk after it, an
// empty specifier clause) are refused, not listed.
func TestParseRefusesMalformed(t *testing.T) {
	for _, s := range []string{
		"name; os_name == ", "name ; python_version < 3", "name ; os_name = 'a'", "name ; foo == 'a'",
		"name==1.0 ; os_name == 'a' junk", "name,>=1.0", "name>=1.0, ,<2", "name @ http://foo.com ; os_name == ",
	} {
		if r, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %+v, want an error", s, r)
		}
	}
	for _, s := range []string{"name>=1.0,", "name (>=1.0,)", "name ; extra == ''", `name ; python_version >= "3.8" and (os_name == "posix")`} {
		if _, err := Parse(s); err != nil {
			t.Errorf("Parse(%q): %v", s, err)
		}
	}
}
