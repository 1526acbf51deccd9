package manifest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// notKeys are the string literals that stand for something other than a
// key although they are spelled like one: a source kind's value
// (`source = "cargo"`) and the default skills directory.
var notKeys = map[string]bool{
	`"cargo"`:  true, // the value of source, and the Kind of a valid installation
	`"skills"`: true, // DefaultSkillsPath, a directory
}

// TestKeysSpelledOnce checks that the package's code, and package
// migrate's, spell no schema key outside keys.go: decoding, encoding,
// validation and migration name them through the constants, so a renamed
// key changes in one place. Struct tags (the JSON
// output form) cannot name a constant and are not counted.
func TestKeysSpelledOnce(t *testing.T) {
	fset := token.NewFileSet()
	kf, err := parser.ParseFile(fset, "keys.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	ast.Inspect(kf, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok {
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					keys[lit.Value] = name.Name
				}
			}
		}
		return true
	})
	if len(keys) < 30 {
		t.Fatalf("found %d key constants in keys.go, want the schema's", len(keys))
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	// migrate rewrites the retired keys to the current ones: it names both
	// through the exported constants.
	more, err := filepath.Glob("migrate/*.go")
	if err != nil || len(more) == 0 {
		t.Fatalf("no migrate sources: %v", err)
	}
	for _, file := range append(files, more...) {
		if file == "keys.go" || strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n.(type) {
			case *ast.Field:
				return false // a struct tag; fields hold no other literals
			case *ast.ImportSpec:
				return false // an import path
			}
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || notKeys[lit.Value] {
				return true
			}
			if name, ok := keys[lit.Value]; ok {
				s, _ := strconv.Unquote(lit.Value)
				t.Errorf("%s: the key %q is spelled again; use %s", fset.Position(lit.Pos()), s, name)
			}
			return true
		})
	}
}
