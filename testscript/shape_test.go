package testscript

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPMShape holds every PM module (pm-*) to one shape, so the binary the
// scenarios run is the binary that ships:
//
//   - each cmd/<binary>/main.go's main is one call to <pm package>.Main(),
//     the package of the same module that exports Main;
//   - the module's scenarios are <pm package>/testdata/script/*.txtar, run
//     by <pm package>/scripts_test.go, and nothing under cmd/ is a test;
//   - every script runner, the module's and this module's, registers the
//     binary as a function whose body is one call to that same Main.
func TestPMShape(t *testing.T) {
	root := repoRoot(t)
	mods, err := filepath.Glob(filepath.Join(root, "pm-*", "go.mod"))
	if err != nil || len(mods) == 0 {
		t.Fatalf("no PM modules under %s (%v)", root, err)
	}
	// Binaries the PM modules ship, with the import path of the package
	// whose Main they call.
	shipped := map[string]string{}
	for _, gomod := range mods {
		dir := filepath.Dir(gomod)
		mod := "github.com/symposium-dev/symposium-pm/" + filepath.Base(dir)
		mains, _ := filepath.Glob(filepath.Join(dir, "cmd", "*", "main.go"))
		if len(mains) == 0 {
			t.Errorf("%s: no cmd/<binary>/main.go", filepath.Base(dir))
		}
		for _, m := range mains {
			bin := filepath.Base(filepath.Dir(m))
			pkg, ok := mainCallsMain(t, root, m)
			if !ok {
				continue
			}
			if !strings.HasPrefix(pkg, mod+"/") {
				t.Errorf("%s: main calls the Main of %s, outside its module", rel(root, m), pkg)
				continue
			}
			shipped[bin] = pkg
			pkgDir := filepath.Join(dir, filepath.FromSlash(strings.TrimPrefix(pkg, mod+"/")))
			checkScripts(t, root, dir, pkgDir, bin)
		}
		filepath.WalkDir(filepath.Join(dir, "cmd"), func(p string, d os.DirEntry, err error) error {
			if err == nil && (strings.HasSuffix(p, "_test.go") || d.IsDir() && d.Name() == "testdata") {
				t.Errorf("%s: tests and scenarios belong beside the PM package, not under cmd/", rel(root, p))
			}
			return nil
		})
	}
	// This module's runner registers every shipped PM through its Main.
	regs := registrations(t, filepath.Join(root, "testscript", "scripts_test.go"))
	for bin, pkg := range shipped {
		if got, ok := regs[bin]; !ok {
			t.Errorf("testscript/scripts_test.go: %s is not registered", bin)
		} else if got != pkg {
			t.Errorf("testscript/scripts_test.go: %s is registered as something other than one call to %s.Main()", bin, pkg)
		}
	}
}

// checkScripts checks that the PM package at pkgDir runs its scenarios
// from testdata/script with a runner registering bin through its own Main,
// and that the module has no other scripts_test.go.
func checkScripts(t *testing.T, root, modDir, pkgDir, bin string) {
	t.Helper()
	runner := filepath.Join(pkgDir, "scripts_test.go")
	scripts, _ := filepath.Glob(filepath.Join(pkgDir, "testdata", "script", "*.txtar"))
	if len(scripts) == 0 {
		t.Errorf("%s: no scenarios in testdata/script", rel(root, pkgDir))
	}
	if _, err := os.Stat(runner); err != nil {
		t.Errorf("%s: no scripts_test.go running testdata/script", rel(root, pkgDir))
		return
	}
	src, _ := os.ReadFile(runner)
	if !strings.Contains(string(src), `"testdata/script"`) {
		t.Errorf("%s: does not run testdata/script", rel(root, runner))
	}
	if got, ok := registrations(t, runner)[bin]; !ok {
		t.Errorf("%s: %s is not registered", rel(root, runner), bin)
	} else if got != "" && got != importPath(root, pkgDir) {
		t.Errorf("%s: %s is registered as something other than one call to the package's Main()", rel(root, runner), bin)
	}
	filepath.WalkDir(modDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "scripts_test.go" && p != runner {
			t.Errorf("%s: a second script runner in the module; scenarios live in %s", rel(root, p), rel(root, filepath.Join(pkgDir, "testdata", "script")))
		}
		return nil
	})
}

// mainCallsMain parses a command's main.go and returns the import path of
// the package whose Main its main calls, reporting false (and an error)
// when main is anything but that one call.
func mainCallsMain(t *testing.T, root, path string) (string, bool) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Errorf("%v", err)
		return "", false
	}
	imports := importNames(f)
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "main" || fn.Recv != nil {
			continue
		}
		if pkg, ok := oneMainCall(fn.Body, imports); ok && pkg != "" {
			return pkg, true
		}
		t.Errorf("%s: main must be one call to the PM package's Main(), nothing else", rel(root, path))
		return "", false
	}
	t.Errorf("%s: no func main", rel(root, path))
	return "", false
}

// registrations returns the binaries a script runner registers (string
// keys of symposium-pm-* in map literals) with the import path of the
// package whose Main the registered function calls: "" for the runner's
// own package, "!" when the function is not one call to a Main.
func registrations(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Errorf("%v", err)
		return nil
	}
	imports := importNames(f)
	out := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		lit, ok := kv.Key.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		bin, err := strconv.Unquote(lit.Value)
		if err != nil || !strings.HasPrefix(bin, "symposium-pm-") {
			return true
		}
		out[bin] = "!"
		if fl, ok := kv.Value.(*ast.FuncLit); ok {
			if pkg, ok := oneMainCall(fl.Body, imports); ok {
				out[bin] = pkg
			}
		}
		return true
	})
	return out
}

// oneMainCall reports whether body is exactly one call, without arguments,
// to Main (pkg "") or to <import>.Main (pkg its import path).
func oneMainCall(body *ast.BlockStmt, imports map[string]string) (string, bool) {
	if body == nil || len(body.List) != 1 {
		return "", false
	}
	es, ok := body.List[0].(*ast.ExprStmt)
	if !ok {
		return "", false
	}
	call, ok := es.X.(*ast.CallExpr)
	if !ok || len(call.Args) != 0 {
		return "", false
	}
	switch fun := call.Fun.(type) {
	case *ast.Ident:
		return "", fun.Name == "Main"
	case *ast.SelectorExpr:
		id, ok := fun.X.(*ast.Ident)
		if !ok || fun.Sel.Name != "Main" || imports[id.Name] == "" {
			return "", false
		}
		return imports[id.Name], true
	}
	return "", false
}

// importNames maps the names a file refers to its imports by to their paths.
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		name := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = p
	}
	return out
}

// importPath is the import path of the package in dir, under the
// repository root.
func importPath(root, dir string) string {
	return "github.com/symposium-dev/symposium-pm/" + filepath.ToSlash(rel(root, dir))
}

func rel(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil {
		return p
	}
	return r
}
