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
		"markers":  "[[package]]\nname = \"a\"\nversion = \"1\"\nmarkers = 1\n",
		"group":    "[[package]]\nname = \"a\"\nversion = \"1\"\nmarkers = {main = [\"x\"]}\n",
	} {
		if _, err := Parse([]byte(body)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if l, err := Parse([]byte("[[package]]\nname = \"a\"\nversion = \"1\"\n")); err != nil || len(l.Packages) != 1 {
		t.Errorf("file without metadata: %v", err)
	}
}

// FuzzParse: Parse never panics. The seeds are small parts of the two
// lockfile formats (TestParse reads the whole testdata files): the
// fuzzer's minimization is quadratic in an input's length, and whole
// lockfiles as seeds kept it from running more than a few inputs in 10 s.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[[package]]\nname = \"click\"\nversion = \"8.0.3\"\ncategory = \"main\"\n\n[metadata]\nlock-version = \"1.1\"\n"))
	f.Add([]byte("[[package]]\nname = \"mylib\"\nversion = \"0.3.0\"\ngroups = [\"main\"]\n\n[package.source]\ntype = \"directory\"\nurl = \"../mylib\"\n\n[metadata]\nlock-version = \"2.1\"\n"))
	f.Add([]byte("[[package]]\nname = \"np\"\nversion = \"1\"\nmarkers = \"python_version < '3.9'\"\n\n[[package]]\nname = \"np\"\nversion = \"2\"\nmarkers = {main = \"python_version >= '3.9'\", dev = 1}\n\n[metadata]\nlock-version = \"2.1\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) { _, _ = Parse(b) })
}
