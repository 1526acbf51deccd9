package pipfile

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	data, _ := os.ReadFile("testdata/Pipfile")
	deps, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []Dep{
		{"requests", "packages", "", ""}, {"flask", "packages", "3.0.0", ""}, {"mylib", "packages", "", "./mylib"},
		{"numpy", "packages", "1.26.4", ""}, {"pytest", "dev-packages", "", ""}, {"sphinx", "docs", "7.2.6", ""},
	}
	if !slices.Equal(deps, want) {
		t.Errorf("got %+v\nwant %+v", deps, want)
	}
	if _, err := Parse([]byte("[packages]\n\"a b\" = \"*\"\n")); err == nil {
		t.Error("bad name accepted")
	}
	// A TOML error names the file and the line.
	if _, err := Parse([]byte("[packages]\nrequests = \"*\"\n[dev-packages\n")); err == nil || !strings.HasPrefix(err.Error(), "Pipfile:3: ") {
		t.Errorf("bad TOML: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	data, _ := os.ReadFile("testdata/Pipfile")
	f.Add(data)
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}
