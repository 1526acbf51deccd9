package protocol_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestWireTypesListed fails when the package declares an exported struct
// type that wireTypes does not list: TestSchemaCoversWireTypes compares
// only the types listed there, so a new message type added without its
// schema definition would otherwise pass unnoticed.
func TestWireTypesListed(t *testing.T) {
	listed := map[string]bool{}
	for _, v := range wireTypes {
		listed[reflect.TypeOf(v).Name()] = true
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	found := 0
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, isStruct := ts.Type.(*ast.StructType); !isStruct || !ts.Name.IsExported() {
					continue
				}
				found++
				if !listed[ts.Name.Name] {
					t.Errorf("%s: struct type %s is not in wireTypes (schema_test.go): list it, and give docs/protocol.schema.json a $defs/%s",
						fset.Position(ts.Pos()), ts.Name.Name, ts.Name.Name)
				}
			}
		}
	}
	if found == 0 {
		t.Fatal("found no exported struct type in the package: the test reads the wrong directory")
	}
}
