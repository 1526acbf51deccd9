package uvlock

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

func TestParse(t *testing.T) {
	data, err := os.ReadFile("testdata/uv.lock")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if l.Version != 1 || l.Revision != 2 || !slices.Equal(l.Members, []string{"app", "app-lib"}) || len(l.Packages) != 6 {
		t.Fatalf("%+v", l)
	}
	root := l.Packages[0]
	// The main dependencies, then the extras', then the groups'.
	if want := []Edge{{Name: "app-lib"}, {Name: "requests"}, {Name: "pysocks"}, {Name: "pytest"}}; !root.IsRoot() || !slices.Equal(root.Edges, want) {
		t.Errorf("root %+v", root)
	}
	if l.Packages[3].Name != "pysocks" || l.Packages[3].Version != "1.7.1" || l.Packages[3].Edges != nil {
		t.Errorf("pysocks %+v", l.Packages[3])
	}
	if !l.Packages[1].IsLocal() || l.Packages[1].IsRoot() {
		t.Errorf("member %+v", l.Packages[1])
	}
}

func TestParseBad(t *testing.T) {
	for name, body := range map[string]string{
		"future schema": "version = 2\n",
		"no version":    "[[package]]\nname = \"x\"\n",
		"not toml":      "version = = 1",
		"bad name":      "version = 1\n[[package]]\nname = \"-x\"\n",
		"wrong type":    "version = 1\npackage = 3\n",
	} {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/uv.lock")
	f.Add(data)
	f.Add([]byte("version = 1\n[[package]]\nname = \"a\"\nversion = \"1\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}

// FuzzNormalize holds the copy-free normalize to pyname.Normalize.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"requests", "App_Lib", "a--b", "-a", "a-", "a.b", "zope.interface", "", "-", "ünï"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normalize(s), pyname.Normalize(s); got != want {
			t.Errorf("normalize(%q) = %q, pyname.Normalize gives %q", s, got, want)
		}
	})
}

// TestParseShares: what a large lock repeats is held once (the source of
// the packages from one registry), and a bad package name is reported
// after the head is checked, as when the lock is decoded whole.
func TestParseShares(t *testing.T) {
	l, err := ParseReader(strings.NewReader("version = 1\n[[package]]\nname = \"a\"\nversion = \"1\"\nsource = { registry = \"https://pypi.org/simple\" }\n" +
		"[[package]]\nname = \"B_c\"\nversion = \"2\"\nsource = { registry = \"https://pypi.org/simple\" }\ndependencies = [{ name = \"A\" }]\n"))
	if err != nil {
		t.Fatal(err)
	}
	a, b := l.Packages[0], l.Packages[1]
	if a.Source != b.Source || a.Source.Registry != "https://pypi.org/simple" {
		t.Errorf("sources %p %+v and %p %+v, want one shared", a.Source, a.Source, b.Source, b.Source)
	}
	if b.Name != "b-c" || !slices.Equal(b.Edges, []Edge{{Name: "a"}}) {
		t.Errorf("package %+v", b)
	}
	for _, r := range []io.ReadSeeker{
		strings.NewReader("version = 2\n[[package]]\nname = \"-x\"\n"),
		strings.NewReader("version = 2\n[[package]]\nname = \"-x\"\nx = \"\"\"\n[[package]]\n\"\"\"\n"), // decoded whole
	} {
		if _, err := ParseReader(r); err == nil || !strings.Contains(err.Error(), "schema version 2") {
			t.Errorf("a future schema with a bad name: %v, want the schema refused", err)
		}
	}
}
