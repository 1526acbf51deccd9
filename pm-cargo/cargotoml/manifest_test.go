package cargotoml

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFull(t *testing.T) {
	m, err := ReadFile(filepath.Join("testdata", "full.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Package == nil || m.Package.Name != "full" || !m.Package.VersionInherited {
		t.Fatalf("package = %+v", m.Package)
	}
	if sym, ok := m.Metadata["symposium"].(map[string]any); !ok || sym["name"] != "full-plugin" {
		t.Errorf("metadata = %v", m.Metadata)
	}
	var got []string
	for _, d := range m.Dependencies {
		got = append(got, fmt.Sprintf("%s:%s:%s:%s:%s:%s:%v:%v:%s", d.Kind, d.Target, d.Key, d.Name, d.Req, d.Path, d.Optional, d.Inherit, d.Git))
	}
	want := []string{
		"normal::fromgit:fromgit:::false:false:https://example.com/x.git",
		"normal::inherited:inherited:::false:true:",
		"normal::local:local::../local:false:false:",
		"normal::renamed:real-name:0.3::true:false:",
		"normal::serde:serde:1::false:false:",
		"dev::proptest:proptest:1::false:false:",
		"dev::legacy:legacy:0.1::false:false:",
		"build::cc:cc:1::false:false:",
		"normal:cfg(windows):winapi:winapi:0.3::false:false:",
		"build:x86_64-unknown-linux-gnu:bindgen:bindgen:0.69::false:false:",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("deps:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestParseReportsEveryProblem checks that the problems of one manifest
// come together, in line order, in the file's terms.
func TestParseReportsEveryProblem(t *testing.T) {
	data := "[package]\nname = 1\nversion = [\"1\"]\nworkspace = false\n\n" +
		"[dependencies]\nzed = 1\nalpha = { version = 2, optional = \"yes\" }\n\n" +
		"[target.'cfg(unix)'.dependencies]\nlibc = []\n"
	_, err := Parse("Cargo.toml", []byte(data))
	want := []string{
		"Cargo.toml:2: package.name: expected a string, found an integer",
		"Cargo.toml:3: package.version: expected a version string or `{ workspace = true }`, found an array",
		"Cargo.toml:4: package.workspace: expected a string, found a boolean",
		"Cargo.toml:7: dependencies.zed: expected a version string or a table, found an integer",
		"Cargo.toml:8: dependencies.alpha.version: expected a string, found an integer",
		"Cargo.toml:8: dependencies.alpha.optional: expected true or false, found a string",
		"Cargo.toml:11: target.\"cfg(unix)\".dependencies.libc: expected a version string or a table, found an array",
	}
	if got := fmt.Sprint(err); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, data, want string }{
		{"syntax", "[package]\nname = \"a\"\n[dependencies]\nserde = \n", "Cargo.toml:4: invalid TOML"},
		{"depType", "[package]\nname = \"a\"\n[dependencies]\nserde = 1\n", "Cargo.toml:4: dependencies.serde: expected a version string or a table, found an integer"},
		{"fieldType", "[package]\nname = \"a\"\n\n[dependencies]\nserde = { version = 1 }\n", "Cargo.toml:5: dependencies.serde.version"},
		{"noName", "[package]\nversion = \"1.0.0\"\n", "Cargo.toml:1: [package] has no name"},
		{"wsFalse", "[package]\nname = \"a\"\n[dependencies]\nx = { workspace = false }\n", "`workspace = false` is not allowed"},
		{"versionTable", "[package]\nname = \"a\"\nversion = { x = 1 }\n", "package.version"},
		{"wsInWs", "[workspace.dependencies]\nx = { workspace = true }\n", "not allowed here"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("Cargo.toml", []byte(tt.data))
			if msg := fmt.Sprint(err); strings.Contains(msg, "interface {}") || strings.Contains(msg, "struct field") || strings.Contains(msg, "int64") {
				t.Errorf("Go type names in %q", msg)
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadWorkspace(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Cargo.toml":             "[workspace]\nmembers = [\"crates/*\", \"missing\"]\nexclude = [\"crates/skip\", \"crates/notes\"]\n[workspace.package]\nversion = \"2.0.0\"\n[workspace.dependencies]\nlog = { version = \"0.4\", package = \"real-log\" }\ninner = { path = \"inner\" }\n",
		"crates/a/Cargo.toml":    "[package]\nname = \"a\"\nversion.workspace = true\n[dependencies]\nlog = { workspace = true, optional = true }\ninner = { workspace = true }\n",
		"crates/b/Cargo.toml":    "[package]\nname = \"b\"\n[dependencies\n",
		"crates/skip/Cargo.toml": "[package]\nname = \"skip\"\n",
		"crates/notes/README":    "not a package\n",
		"inner/Cargo.toml":       "[package]\nname = \"inner\"\nversion = \"0.1.0\"\n",
	})
	var observed []string
	ws, err := Load(filepath.Join(dir, "crates", "a"), Options{Observe: func(p string, _ Observed) { observed = append(observed, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if ws.Root != dir {
		t.Errorf("root = %s, want %s", ws.Root, dir)
	}
	var names []string
	for _, m := range ws.Members {
		names = append(names, m.Name+"@"+m.Version)
	}
	if got := strings.Join(names, " "); got != "a@2.0.0 inner@0.1.0" {
		t.Errorf("members = %s", got)
	}
	if len(ws.Errors) != 2 {
		t.Fatalf("errors = %v, want b and missing", ws.Errors)
	}
	if e := ws.Errors[0].Error() + ws.Errors[1].Error(); !strings.Contains(e, "crates/b") || !strings.Contains(e, "missing") || !strings.Contains(e, "Cargo.toml:3: invalid TOML") {
		t.Errorf("errors = %v", ws.Errors)
	}
	a := ws.Members[0]
	if len(a.Deps) != 2 || a.Deps[1].Name != "real-log" || !a.Deps[1].Optional || a.Deps[1].Req != "0.4" || a.Deps[0].Path != filepath.Join(dir, "inner") {
		t.Errorf("a deps = %+v", a.Deps)
	}
	joined := strings.Join(observed, "\n")
	for _, want := range []string{filepath.Join(dir, "Cargo.toml"), filepath.Join(dir, "crates"), filepath.Join(dir, "crates", "a", "Cargo.toml")} {
		if !strings.Contains(joined, want) {
			t.Errorf("%s not observed:\n%s", want, joined)
		}
	}
}

func TestLoadFindsRootAbove(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Cargo.toml":           "[workspace]\nmembers = [\"app\"]\nexclude = [\"other\"]\n",
		"app/Cargo.toml":       "[package]\nname = \"app\"\nversion = \"1.0.0\"\n",
		"app/src/lib.rs":       "",
		"other/Cargo.toml":     "[package]\nname = \"other\"\nversion = \"3.0.0\"\n",
		"pointer/Cargo.toml":   "[package]\nname = \"pointer\"\nworkspace = \"../elsewhere\"\n",
		"elsewhere/Cargo.toml": "[workspace]\nmembers = [\"../pointer\"]\n",
	})
	for start, want := range map[string]string{
		filepath.Join(dir, "app", "src"): dir,
		filepath.Join(dir, "other"):      filepath.Join(dir, "other"),
		filepath.Join(dir, "pointer"):    filepath.Join(dir, "elsewhere"),
	} {
		ws, err := Load(start, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ws.Root != want {
			t.Errorf("from %s: root %s, want %s", start, ws.Root, want)
		}
	}
	if _, err := Load(t.TempDir(), Options{}); err == nil || !strings.Contains(err.Error(), "no Cargo.toml") {
		t.Errorf("empty dir: %v", err)
	}
}

func TestLoadInheritanceErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Cargo.toml":   "[workspace]\nmembers = [\"a\", \"b\"]\n",
		"a/Cargo.toml": "[package]\nname = \"a\"\nversion.workspace = true\n",
		"b/Cargo.toml": "[package]\nname = \"b\"\n[dependencies]\nx = { workspace = true }\n",
	})
	ws, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws.Members) != 0 || len(ws.Errors) != 2 {
		t.Fatalf("members %v errors %v", ws.Members, ws.Errors)
	}
	if !strings.Contains(ws.Errors[0].Error(), "[workspace.package] version") || !strings.Contains(ws.Errors[1].Error(), `has no "x"`) {
		t.Errorf("errors = %v", ws.Errors)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.toml"))
	for _, p := range files {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("[workspace]\nmembers = [\"*\"]\n[workspace.dependencies]\na = { path = \"x\", package = \"b\" }\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := Parse("fuzz.toml", data)
		if err != nil {
			return
		}
		for _, d := range m.Dependencies {
			if d.Name == "" || d.Key == "" {
				t.Fatalf("dependency without a name: %+v", d)
			}
		}
	})
}

func TestGlobs(t *testing.T) {
	dir := t.TempDir()
	pkg := func(name string) string { return "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\n" }
	write(t, dir, map[string]string{
		"Cargo.toml":                  "[workspace]\nmembers = [\"libs/**\", \"apps/app-?\", \"tools/[ab]*\", \"/nonexistent/abs\"]\nexclude = [\"libs/skip\"]\n",
		"libs/one/Cargo.toml":         pkg("one"),
		"libs/nested/Cargo.toml":      pkg("nested"),
		"libs/nested/two/Cargo.toml":  pkg("two"),
		"libs/skip/Cargo.toml":        pkg("skip"),
		"libs/skip/deeper/Cargo.toml": pkg("deeper-skipped"),
		"libs/.hidden/Cargo.toml":     pkg("hidden"),
		"libs/target/Cargo.toml":      pkg("in-target"),
		"libs/target/x/Cargo.toml":    pkg("x"),
		"apps/app-1/Cargo.toml":       pkg("app-1"),
		"apps/app-10/Cargo.toml":      pkg("app-10"),
		"tools/alpha/Cargo.toml":      pkg("alpha"),
		"tools/charlie/Cargo.toml":    pkg("charlie"),
	})
	ws, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ws.Members {
		names = append(names, m.Name)
	}
	// As cargo's glob, ** descends into hidden directories and target/.
	if got := strings.Join(names, " "); got != "app-1 hidden nested two one in-target x alpha" {
		t.Errorf("members = %s", got)
	}
	if len(ws.Errors) != 1 || !strings.Contains(ws.Errors[0].Error(), "nonexistent") {
		t.Errorf("errors = %v", ws.Errors)
	}
}

// TestLayoutsCargoFollows pins cargo's rules for which packages a
// workspace holds, each checked against cargo metadata by hand and in the
// oracle test.
func TestLayoutsCargoFollows(t *testing.T) {
	pkg := func(name, extra string) string {
		return "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\n" + extra
	}
	tests := []struct {
		name  string
		files map[string]string
		start string
		root  string // relative; "" for the temporary directory itself
		names string // members by directory order
		err   string // a substring of the error cargo's refusal becomes
	}{
		{
			name: "explicit members under a broader exclude",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/a\", \"crates/b\"]\nexclude = [\"crates\"]\n",
				"crates/a/Cargo.toml": pkg("a", ""),
				"crates/b/Cargo.toml": pkg("b", ""),
			},
			names: "a b",
		},
		{
			name: "explicit member opened from its own directory",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/a\", \"crates/b\"]\nexclude = [\"crates\"]\n",
				"crates/a/Cargo.toml": pkg("a", ""),
				"crates/b/Cargo.toml": pkg("b", ""),
			},
			start: "crates/a",
			names: "a b",
		},
		{
			name: "glob members under an exclude stay out",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/b\"]\n",
				"crates/a/Cargo.toml": pkg("a", ""),
				"crates/b/Cargo.toml": pkg("b", ""),
			},
			names: "a",
		},
		{
			name: "an ancestor's package.workspace is followed from a nested package",
			files: map[string]string{
				"ws/Cargo.toml":       "[workspace]\nmembers = [\"../pa\", \"../pa/inner\"]\n",
				"pa/Cargo.toml":       pkg("pa", "workspace = \"../ws\"\n"),
				"pa/inner/Cargo.toml": pkg("inner", ""),
			},
			start: "pa/inner",
			root:  "ws",
			names: "pa inner",
		},
		{
			name: "a path dependency outside the root that points back is a member",
			files: map[string]string{
				"ws/Cargo.toml":      "[workspace]\nmembers = [\"app\"]\n",
				"ws/app/Cargo.toml":  pkg("app", "[dependencies]\nout = { path = \"../../out\" }\n"),
				"out/Cargo.toml":     pkg("out", "workspace = \"../ws\"\n[dependencies]\nserde = \"1\"\n"),
				"other/Cargo.toml":   pkg("other", ""),
				"ws/app2/Cargo.toml": pkg("app2", ""),
			},
			start: "ws",
			root:  "ws",
			names: "out app",
		},
		{
			name: "a package under a workspace that does not list it",
			files: map[string]string{
				"Cargo.toml":       "[workspace]\nmembers = [\"a\"]\n",
				"a/Cargo.toml":     pkg("a", ""),
				"stray/Cargo.toml": pkg("stray", ""),
				"stray/src/lib.rs": "",
			},
			start: "stray/src",
			err:   "does not list it as a member; add \"stray\" to workspace.members",
		},
		{
			name: "a member glob matching a directory without Cargo.toml",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/*\"]\n",
				"crates/a/Cargo.toml": pkg("a", ""),
				"crates/docs/README":  "",
			},
			err: "workspace member crates/docs (matched by \"crates/*\" in workspace.members) has no Cargo.toml",
		},
		{
			name: "a negated class [!a] leaves out what starts with a",
			files: map[string]string{
				"Cargo.toml":           "[workspace]\nmembers = [\"crates/[!a]*\"]\n",
				"crates/aa/Cargo.toml": pkg("aa", ""),
				"crates/bb/Cargo.toml": pkg("bb", ""),
			},
			names: "bb",
		},
		{
			name: "a glob matching only files adds no member and is accepted",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/*\", \"docs/*\", \"ext/*/two\"]\n",
				"crates/a/Cargo.toml": pkg("a", ""),
				"docs/README.md":      "",
				"ext/x/two":           "a file",
			},
			names: "a",
		},
		{
			name: "a glob matching nothing is a literal path cargo fails to load",
			files: map[string]string{
				"Cargo.toml":        "[workspace]\nmembers = [\"libs/*\", \"crates/*\"]\n",
				"libs/x/Cargo.toml": pkg("x", ""),
			},
			err: "workspace member pattern \"crates/*\" matches nothing",
		},
		{
			name: "a literal component after a wildcard matching nothing",
			files: map[string]string{
				"Cargo.toml":     "[workspace]\nmembers = [\"ext/*/two\"]\n",
				"ext/a/README":   "",
				"ext/b/one/x.rs": "",
			},
			err: "workspace member pattern \"ext/*/two\" matches nothing",
		},
		{
			name: "a pattern the glob crate cannot parse",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"crates/a**\"]\n",
				"crates/a/Cargo.toml": pkg("a", ""),
			},
			err: "recursive wildcards must form a single path component",
		},
		{
			name: "a path dependency inside the root with a [workspace] of its own",
			files: map[string]string{
				"Cargo.toml":       pkg("app", "\n[workspace]\n\n[dependencies]\ninner = { path = \"inner\" }\n"),
				"inner/Cargo.toml": pkg("inner", "\n[workspace]\n"),
			},
			err: "workspace member inner has a [workspace] table of its own",
		},
		{
			name: "a glob member with a [workspace] of its own",
			files: map[string]string{
				"Cargo.toml":              "[workspace]\nmembers = [\"crates/*\"]\n",
				"crates/inner/Cargo.toml": pkg("inner", "\n[workspace]\n"),
			},
			err: "workspace member crates/inner has a [workspace] table of its own",
		},
		{
			name: "a member outside the root that does not point back",
			files: map[string]string{
				"ws/Cargo.toml":  "[workspace]\nmembers = [\"../sib\"]\n",
				"sib/Cargo.toml": pkg("sib", ""),
			},
			start: "ws",
			err:   "workspace member ../sib is not hierarchically below the workspace root",
		},
		{
			name: "a member outside the root inside another workspace",
			files: map[string]string{
				"ws/Cargo.toml":        "[workspace]\nmembers = [\"../other/sib\"]\n",
				"other/Cargo.toml":     "[workspace]\n",
				"other/sib/Cargo.toml": pkg("sib", ""),
			},
			start: "ws",
			err:   "workspace member ../other/sib belongs to the workspace whose root is",
		},
		{
			name: "a member below the root under a nested [workspace] belongs to the root",
			files: map[string]string{
				"Cargo.toml":          "[workspace]\nmembers = [\"nested/a\"]\n",
				"nested/Cargo.toml":   "[workspace]\n",
				"nested/a/Cargo.toml": pkg("a", ""),
			},
			names: "a",
		},
		{
			name: "a virtual manifest with [dependencies]",
			files: map[string]string{
				"Cargo.toml":   "[workspace]\nmembers = [\"a\"]\n\n[dependencies]\nitoa = \"1\"\n",
				"a/Cargo.toml": pkg("a", ""),
			},
			err: "this virtual manifest specifies a `dependencies` section, which is not allowed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, tt.files)
			ws, err := Load(filepath.Join(dir, filepath.FromSlash(tt.start)), Options{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Load error = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(dir, filepath.FromSlash(tt.root)); ws.Root != want {
				t.Errorf("root = %s, want %s", ws.Root, want)
			}
			var names []string
			for _, m := range ws.Members {
				names = append(names, m.Name)
			}
			if got := strings.Join(names, " "); got != tt.names {
				t.Errorf("members = %q, want %q (errors %v)", got, tt.names, ws.Errors)
			}
		})
	}
}

// TestParseReplaceAndPatch: cargo refuses a manifest with both a [replace]
// and a [patch] table, even empty ones, and accepts either alone. Each case
// is also given to `cargo metadata --offline --no-deps` when cargo is
// installed, which must agree.
func TestParseReplaceAndPatch(t *testing.T) {
	const pkg = "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	tests := []struct {
		name, data string
		refused    bool
	}{
		{"both", pkg + "\n[patch.crates-io]\nfoo = { path = \"foo\" }\n\n[replace]\n\"bar:1.0.0\" = { path = \"bar\" }\n", true},
		{"both empty", pkg + "\n[patch.crates-io]\n\n[replace]\n", true},
		{"bare headers", pkg + "\n[replace]\n\n[patch]\n", true},
		{"inline", "replace = {}\npatch = {}\n" + pkg, true},
		{"virtual root", "[workspace]\nmembers = []\n\n[replace]\n\"bar:1.0.0\" = { path = \"bar\" }\n\n[patch.crates-io]\nfoo = { path = \"foo\" }\n", true},
		{"replace alone", pkg + "\n[replace]\n\"bar:1.0.0\" = { path = \"bar\" }\n", false},
		{"patch alone", pkg + "\n[patch.crates-io]\nfoo = { path = \"foo\" }\n", false},
		{"the words elsewhere", pkg + "\n# replace me\n[patch.crates-io]\nreplace = { path = \"foo\" }\n", false},
	}
	cargo, _ := exec.LookPath("cargo")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("Cargo.toml", []byte(tt.data))
			if !tt.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
			} else if err == nil {
				t.Fatal("accepted; cargo refuses a manifest with both [replace] and [patch]")
			} else {
				msg := err.Error()
				for _, w := range []string{"Cargo.toml:", "cannot specify both [replace] and [patch]", "[patch.crates-io]", "delete [replace]"} {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q does not say %q", msg, w)
					}
				}
			}
			if cargo == "" {
				return
			}
			dir := t.TempDir()
			write(t, dir, map[string]string{"Cargo.toml": tt.data, "src/lib.rs": ""})
			cmd := exec.Command(cargo, "metadata", "--offline", "--no-deps", "--format-version", "1")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CARGO_TERM_COLOR=never")
			out, cerr := cmd.CombinedOutput()
			if (cerr != nil) != tt.refused || (tt.refused && !strings.Contains(string(out), "cannot specify both [replace] and [patch]")) {
				t.Errorf("cargo metadata disagrees with the table (refused: %v): %v\n%s", tt.refused, cerr, out)
			}
		})
	}
}

// TestParseVirtualManifestSections: cargo refuses a virtual manifest
// ([workspace] without [package]) that has a section only a package can
// have, even an empty one, naming it; [patch], [replace] and [profile] are
// the root's to have. Each case is also given to `cargo metadata
// --offline --no-deps` when cargo is installed, which must agree.
func TestParseVirtualManifestSections(t *testing.T) {
	const ws = "[workspace]\nmembers = [\"a\"]\n"
	tests := []struct {
		name, data string
		refused    string // cargo's name for the section; "" when accepted
	}{
		{"dependencies", ws + "\n[dependencies]\nitoa = \"1\"\n", "dependencies"},
		{"empty dependencies", ws + "\n[dependencies]\n", "dependencies"},
		{"dev_dependencies", ws + "\n[dev_dependencies]\n", "dev-dependencies"},
		{"build-dependencies", ws + "\n[build-dependencies]\n", "build-dependencies"},
		{"target", ws + "\n[target.'cfg(unix)'.dependencies]\nlibc = \"0.2\"\n", "target"},
		{"features", ws + "\n[features]\nx = []\n", "features"},
		{"bin", ws + "\n[[bin]]\nname = \"x\"\n", "bin"},
		{"lints", ws + "\n[lints.rust]\nunsafe_code = \"forbid\"\n", "lints"},
		{"workspace dependencies", ws + "\n[workspace.dependencies]\nitoa = \"1\"\n", ""},
		{"patch and profile", ws + "\n[patch.crates-io]\n\n[profile.release]\nlto = true\n", ""},
	}
	cargo, _ := exec.LookPath("cargo")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("Cargo.toml", []byte(tt.data))
			want := "this virtual manifest specifies a `" + tt.refused + "` section, which is not allowed"
			switch {
			case tt.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "Cargo.toml:")):
				t.Fatalf("error %v, want one naming the line and saying %q", err, want)
			}
			if cargo == "" {
				return
			}
			dir := t.TempDir()
			write(t, dir, map[string]string{"Cargo.toml": tt.data, "a/Cargo.toml": "[package]\nname = \"a\"\nversion = \"0.1.0\"\n", "a/src/lib.rs": ""})
			cmd := exec.Command(cargo, "metadata", "--offline", "--no-deps", "--format-version", "1")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CARGO_TERM_COLOR=never")
			out, cerr := cmd.CombinedOutput()
			if (cerr != nil) != (tt.refused != "") || (tt.refused != "" && !strings.Contains(string(out), want)) {
				t.Errorf("cargo metadata disagrees with the table (refused: %q): %v\n%s", tt.refused, cerr, out)
			}
		})
	}
}

// TestLoadFailsOnABrokenAncestor: cargo parses every Cargo.toml above a
// package while looking for its workspace, and a broken one fails the
// command; so does Load, naming that file.
func TestLoadFailsOnABrokenAncestor(t *testing.T) {
	for name, root := range map[string]string{
		"syntax":            "[workspace\nmembers = [\"m\"]\n",
		"replace and patch": "[workspace]\nmembers = [\"m\"]\n\n[replace]\n\n[patch.crates-io]\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, map[string]string{
				"Cargo.toml":   root,
				"m/Cargo.toml": "[package]\nname = \"m\"\nversion = \"0.1.0\"\n",
			})
			_, err := Load(filepath.Join(dir, "m"), Options{})
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "Cargo.toml")) {
				t.Errorf("Load from the member: %v, want an error naming %s", err, filepath.Join(dir, "Cargo.toml"))
			}
		})
	}
}

// TestParseRedirects: the [patch.<source>] and [replace] entries with a
// path are read, patches first and each table by key, with the crate name
// cargo looks for there (a patch's `package` key; a [replace] spec's name,
// in every form of package id spec that names a version) and the version a
// [replace] spec pins. Entries without a path, and values of other types,
// are not redirects to a path crate and are left to cargo.
func TestParseRedirects(t *testing.T) {
	data := `[package]
name = "app"
version = "0.1.0"

[patch.crates-io]
heck = { path = "../heck-fork" }
casing = { path = "../casing", package = "heck" }
serde = { git = "https://example.com/serde" }
odd = "1"

[patch."https://github.com/x/gitdep"]
gitdep = { path = "/abs/gd" }
`
	replace := `[package]
name = "app"
version = "0.1.0"

[replace]
"fnv:1.0.7" = { path = "../fnv" }
"either@1.9.0" = { path = "../either" }
"https://github.com/rust-lang/crates.io-index#itoa@1.0.1" = { path = "../itoa" }
"https://github.com/rust-lang/crates.io-index#ryu:1.0.2" = { path = "../ryu" }
"https://github.com/x/hex#0.4.3" = { path = "../hex" }
"noversion" = { path = "../nv" }
"git:1.0.0" = { git = "https://example.com/git" }
`
	tests := []struct {
		name, data string
		want       []Redirect
	}{
		{"patch", data, []Redirect{
			{Source: "crates-io", Key: "casing", Name: "heck", Path: "../casing"},
			{Source: "crates-io", Key: "heck", Name: "heck", Path: "../heck-fork"},
			{Source: "https://github.com/x/gitdep", Key: "gitdep", Name: "gitdep", Path: "/abs/gd"},
		}},
		{"replace", replace, []Redirect{
			{Replace: true, Key: "either@1.9.0", Name: "either", Version: "1.9.0", Path: "../either"},
			{Replace: true, Key: "fnv:1.0.7", Name: "fnv", Version: "1.0.7", Path: "../fnv"},
			{Replace: true, Key: "https://github.com/rust-lang/crates.io-index#itoa@1.0.1", Name: "itoa", Version: "1.0.1", Path: "../itoa"},
			{Replace: true, Key: "https://github.com/rust-lang/crates.io-index#ryu:1.0.2", Name: "ryu", Version: "1.0.2", Path: "../ryu"},
			{Replace: true, Key: "https://github.com/x/hex#0.4.3", Name: "hex", Version: "0.4.3", Path: "../hex"},
		}},
		{"neither", "[package]\nname = \"app\"\nversion = \"0.1.0\"\n# a patch, replaced\n", nil},
		{"patch not a table", "patch = 1\n[package]\nname = \"app\"\nversion = \"0.1.0\"\n", nil},
		{"replace entry not a table", "[package]\nname = \"app\"\nversion = \"0.1.0\"\n[replace]\n\"fnv:1.0.7\" = \"../fnv\"\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Parse("Cargo.toml", []byte(tt.data))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(m.Redirects) != fmt.Sprint(tt.want) {
				t.Errorf("redirects\n got  %+v\n want %+v", m.Redirects, tt.want)
			}
			for _, r := range m.Redirects {
				want := "[replace] entry \"" + r.Key + "\""
				switch r.Source {
				case "crates-io":
					want = "[patch.crates-io] entry \"" + r.Key + "\""
				case "https://github.com/x/gitdep":
					want = "[patch.\"https://github.com/x/gitdep\"] entry \"" + r.Key + "\""
				}
				if r.Table() != want {
					t.Errorf("Table() = %s, want %s", r.Table(), want)
				}
			}
		})
	}
}
