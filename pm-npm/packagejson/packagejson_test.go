package packagejson

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

func TestParse(t *testing.T) {
	m, err := Parse([]byte("\uFEFF" + `{"name":"a","version":"1.0.0","license":{"type":"MIT"},"bin":"x",
	  "dependencies":{"b":"^1","c":2,"d":"npm:@s/e@~2"},"devDependencies":"nonsense",
	  "peerDependencies":{"p":"*"},"workspaces":{"packages":["pkgs/*"]},"symposium":{"name":"n"},
	  "name":"dup-wins"}`))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "dup-wins" || m.Version != "1.0.0" || string(m.Symposium) != `{"name":"n"}` || !slices.Equal(m.Workspaces, []string{"pkgs/*"}) {
		t.Errorf("%+v", m)
	}
	want := []Dep{{"b", "^1", Prod}, {"d", "npm:@s/e@~2", Prod}, {"p", "*", Peer}}
	if !slices.Equal(m.Deps, want) {
		t.Errorf("deps %+v, want %+v", m.Deps, want)
	}
	if _, err := Parse([]byte(`["not an object"]`)); err == nil {
		t.Error("array accepted")
	}
}

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		name, spec string
		want       Spec
	}{
		{"a", "^1.2.3", Spec{Registry, "a", "^1.2.3"}},
		{"a", "latest", Spec{Registry, "a", "latest"}},
		{"a", "", Spec{Registry, "a", ""}},
		{"x", "npm:real@^1", Spec{Alias, "real", "^1"}},
		{"x", "npm:@scope/real@1.2.3", Spec{Alias, "@scope/real", "1.2.3"}},
		{"x", "npm:real", Spec{Alias, "real", ""}},
		{"a", "npm:^1.0.0", Spec{Registry, "a", "^1.0.0"}},
		{"a", "file:../a", Spec{File, "a", "../a"}},
		{"a", "../a", Spec{File, "a", "../a"}},
		{"a", "./a.tgz", Spec{File, "a", "./a.tgz"}},
		{"a", "link:../a", Spec{Link, "a", "../a"}},
		{"a", "workspace:^", Spec{Workspace, "a", "^"}},
		{"a", "github:u/r#v1", Spec{Git, "a", "github:u/r#v1"}},
		{"a", "u/r", Spec{Git, "a", "u/r"}},
		{"a", "git+https://github.com/u/r.git#abc", Spec{Git, "a", "git+https://github.com/u/r.git#abc"}},
		{"a", "https://github.com/u/r.git", Spec{Git, "a", "https://github.com/u/r.git"}},
		{"a", "https://example.com/a-1.0.0.tgz", Spec{URL, "a", "https://example.com/a-1.0.0.tgz"}},
		{"a", "catalog:", Spec{Other, "a", "catalog:"}},
		{"a", ">=1.0.0 <2", Spec{Registry, "a", ">=1.0.0 <2"}},
	} {
		if got := ParseSpec(tc.name, tc.spec); got != tc.want {
			t.Errorf("ParseSpec(%q, %q) = %+v, want %+v", tc.name, tc.spec, got, tc.want)
		}
	}
}

func TestValidName(t *testing.T) {
	for n, want := range map[string]bool{"a": true, "@s/a": true, "a.b-c_d": true, "UPPER": true, "": false,
		"../x": false, "@s": false, "@s/": false, "a/b": false, ".hidden": false, "_x": false, "a b": false, "@s/../x": false} {
		if ValidName(n) != want {
			t.Errorf("ValidName(%q) = %v", n, !want)
		}
	}
}

func TestExpandWorkspaces(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"packages/a", "packages/b", "packages/nopkg", "tools/x/y/z", "packages/a/node_modules/q", "excluded/e"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
		if d != "packages/nopkg" {
			os.WriteFile(filepath.Join(root, d, "package.json"), []byte("{}"), 0o644)
		}
	}
	ex := ExpandWorkspaces(root, []string{"packages/*", "tools/**", "./excluded/e", "!excluded/e", "../escape"})
	want := []string{"packages/a", "packages/b", "tools/x/y/z"}
	if !slices.Equal(ex.Dirs, want) {
		t.Errorf("dirs %v, want %v", ex.Dirs, want)
	}
	if len(ex.Listed) == 0 {
		t.Error("no listed directories recorded")
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"name":"a","dependencies":{"b":"^1"},"workspaces":["x/*"],"symposium":{}}`))
	f.Add([]byte(`{"workspaces":{"packages":[1,"a"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse(data)
		if err != nil {
			return
		}
		for _, d := range m.Deps {
			ParseSpec(d.Name, d.Spec)
		}
	})
}

func FuzzParseSpec(f *testing.F) {
	for _, s := range []string{"^1", "npm:@a/b@1", "file:x", "u/r#x", "git+ssh://x", "catalog:", "@"} {
		f.Add("n", s)
	}
	f.Fuzz(func(t *testing.T, name, spec string) {
		s := ParseSpec(name, spec)
		if s.Kind == Alias && !ValidName(s.Name) {
			t.Errorf("alias to invalid name %q", s.Name)
		}
	})
}

// TestReadBounded: the workspace's own package.json is read with the same
// bounds as a dependency's: a FIFO is refused without blocking, an oversize
// file before it is read, each with an error naming it.
func TestReadBounded(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo", "package.json")
	big := filepath.Join(dir, "big", "package.json")
	for _, d := range []string{filepath.Dir(fifo), filepath.Dir(big)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.WriteFile(big, append([]byte(`{"name":"`), make([]byte, pkgfile.MaxManifest)...), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, cause := range map[string]error{fifo: pkgfile.ErrNotRegular, big: pkgfile.ErrTooLarge} {
		if _, err := Read(path); !errors.Is(err, cause) || !strings.Contains(err.Error(), path) {
			t.Errorf("Read(%s) = %v, want %v naming the file", path, err, cause)
		}
	}
}
