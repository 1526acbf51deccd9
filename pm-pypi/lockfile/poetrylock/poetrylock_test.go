package poetrylock

import (
	"os"
	"testing"
)

func TestParse(t *testing.T) {
	for file, want := range map[string][]Package{
		"testdata/poetry-1.1.lock": {{Name: "click", Version: "8.0.3", Category: "main"}, {Name: "pytest", Version: "6.2.5", Category: "dev"}},
		"testdata/poetry-2.1.lock": {{Name: "mylib", Version: "0.3.0", Groups: []string{"main"}, SourceType: "directory", SourceURL: "../mylib"},
			{Name: "requests", Version: "2.32.3", Groups: []string{"main", "dev"}}},
	} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		l, err := Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if len(l.Packages) != len(want) {
			t.Fatalf("%s: %+v", file, l.Packages)
		}
		for i, p := range l.Packages {
			w := want[i]
			if p.Name != w.Name || p.Version != w.Version || p.Category != w.Category || len(p.Groups) != len(w.Groups) || p.SourceType != w.SourceType || p.SourceURL != w.SourceURL {
				t.Errorf("%s: package %d = %+v, want %+v", file, i, p, w)
			}
		}
	}
}

func TestParseBad(t *testing.T) {
	for name, body := range map[string]string{
		"future":   "[metadata]\nlock-version = \"3.0\"\n",
		"garbage":  "[metadata]\nlock-version = \"x\"\n",
		"not toml": "[[package]\n",
		"bad name": "[[package]]\nname = \"\"\nversion = \"1\"\n",
		"zero":     "[metadata]\nlock-version = \"0.9\"\n",
	} {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if l, err := Parse([]byte("[[package]]\nname = \"a\"\nversion = \"1\"\n")); err != nil || len(l.Packages) != 1 {
		t.Errorf("file without metadata: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, p := range []string{"testdata/poetry-1.1.lock", "testdata/poetry-2.1.lock"} {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}
