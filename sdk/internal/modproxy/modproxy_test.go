package modproxy

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func TestWrite(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"go.mod":            "module example.com/Mixed/m\n\ngo 1.22\n",
		"m.go":              "package m\n",
		"cmd/x/main.go":     "package main\nfunc main() {}\n",
		"nested/go.mod":     "module example.com/other\n",
		"nested/skipped.go": "package other\n",
	}
	for name, body := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proxy := t.TempDir()
	m := Module{Path: "example.com/Mixed/m", Version: "v1.0.0", Dir: src,
		Require: []module.Version{{Path: "example.com/dep", Version: "v0.2.0"}}}
	if err := Write(proxy, m, Module{Path: m.Path, Version: "v1.1.0", Dir: src}); err != nil {
		t.Fatal(err)
	}
	vdir := filepath.Join(proxy, "example.com", "!mixed", "m", "@v")
	list, _ := os.ReadFile(filepath.Join(vdir, "list"))
	if string(list) != "v1.0.0\nv1.1.0\n" {
		t.Errorf("list = %q", list)
	}
	mod, _ := os.ReadFile(filepath.Join(vdir, "v1.0.0.mod"))
	if !strings.Contains(string(mod), "require example.com/dep v0.2.0") {
		t.Errorf("published go.mod lacks the require:\n%s", mod)
	}
	cf, err := modzip.CheckZip(module.Version{Path: m.Path, Version: "v1.0.0"}, filepath.Join(vdir, "v1.0.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cf.Err(); err != nil {
		t.Error(err)
	}
	for _, f := range cf.Valid {
		if strings.HasPrefix(f, "nested/") {
			t.Errorf("nested module file %s published", f)
		}
	}
	sums, err := Sums(proxy, m.Path, "v1.0.0")
	if err != nil || len(sums) != 2 || !strings.HasPrefix(sums[0], "example.com/Mixed/m v1.0.0 h1:") || !strings.HasPrefix(sums[1], "example.com/Mixed/m v1.0.0/go.mod h1:") {
		t.Errorf("Sums = %q, %v", sums, err)
	}
	if err := Write(proxy, Module{Path: "example.com/wrong", Version: "v1.0.0", Dir: src}); err == nil || !strings.Contains(err.Error(), "does not declare module") {
		t.Errorf("a mismatched module path: err = %v", err)
	}
}
