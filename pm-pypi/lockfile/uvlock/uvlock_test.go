package uvlock

import (
	"os"
	"slices"
	"testing"
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
	if !root.IsRoot() || !slices.Equal(root.Dependencies, []string{"app-lib", "requests"}) ||
		!slices.Equal(root.Optional["socks"], []string{"pysocks"}) || !slices.Equal(root.DevGroups["dev"], []string{"pytest"}) {
		t.Errorf("root %+v", root)
	}
	if l.Packages[3].Name != "pysocks" || l.Packages[3].Version != "1.7.1" || l.Packages[3].Optional != nil {
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
