package cargotoml

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMemberPatternComponent pins how one component of a workspace member
// pattern matches a name, as the glob crate cargo uses reads it
// (glob::Pattern): `[!...]` negates, `^` and `\` are ordinary characters,
// a `]` right after `[` or `[!` is in the set, a `-` first or last is
// itself; unclosed brackets and `**` inside a component are errors.
// Go's filepath.Match reads `[!a]`, `[^a]`, `[]]` and `\` otherwise.
func TestMemberPatternComponent(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		nomatch []string
		err     string // a substring of the parse error
	}{
		{pattern: "[!a]*", match: []string{"bb", "b", "^x", "!x"}, nomatch: []string{"aa", "a", ""}},
		{pattern: "[^a]*", match: []string{"aa", "^x"}, nomatch: []string{"bb", "!x"}},
		{pattern: "k[!e]tteh", match: []string{"kitteh"}, nomatch: []string{"ketteh"}},
		{pattern: "[]]", match: []string{"]"}, nomatch: []string{"a", "[]"}},
		{pattern: "[!]]", match: []string{"a", "["}, nomatch: []string{"]"}},
		{pattern: "[]a]x", match: []string{"]x", "ax"}, nomatch: []string{"bx"}},
		{pattern: "[!]a]x", match: []string{"bx"}, nomatch: []string{"]x", "ax"}},
		{pattern: "[-a]", match: []string{"-", "a"}, nomatch: []string{"b"}},
		{pattern: "[a-]", match: []string{"-", "a"}, nomatch: []string{"b"}},
		{pattern: "[a-c-]", match: []string{"a", "b", "c", "-"}, nomatch: []string{"d"}},
		{pattern: "[!-]", match: []string{"a"}, nomatch: []string{"-"}},
		{pattern: "[0-9]x", match: []string{"0x", "9x"}, nomatch: []string{"ax"}},
		{pattern: "[!0-9]x", match: []string{"ax"}, nomatch: []string{"5x"}},
		{pattern: "[2-1]", nomatch: []string{"1", "2"}},
		{pattern: "[?]", match: []string{"?"}, nomatch: []string{"a"}},
		{pattern: `a\*`, match: []string{`a\`, `a\b`}, nomatch: []string{"a*b", "a"}},
		{pattern: "app-?", match: []string{"app-1"}, nomatch: []string{"app-10", "app-"}},
		{pattern: "*", match: []string{"x", ".hidden", ""}},
		{pattern: "a*b*c", match: []string{"abc", "a_b_c", "a___b___c"}, nomatch: []string{"abcd", "ab"}},
		{pattern: "*é?", match: []string{"xéy", "éé"}, nomatch: []string{"xé"}},
		{pattern: "[é]", match: []string{"é"}, nomatch: []string{"e"}},
		{pattern: "a**", err: "recursive wildcards must form a single path component"},
		{pattern: "***", err: "wildcards are either regular `*` or recursive `**`"},
		{pattern: "abc[def", err: "invalid range pattern"},
		{pattern: "abc[!def", err: "invalid range pattern"},
		{pattern: "abc[", err: "invalid range pattern"},
		{pattern: "abc[]", err: "invalid range pattern"},
		{pattern: "abc[!]", err: "invalid range pattern"},
		{pattern: "abc[!", err: "invalid range pattern"},
	}
	for _, tt := range tests {
		p, err := compileComponent(tt.pattern)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want one containing %q", tt.pattern, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.pattern, err)
			continue
		}
		for _, name := range tt.match {
			if !p.match(name) {
				t.Errorf("%q does not match %q; the glob crate matches it", tt.pattern, name)
			}
		}
		for _, name := range tt.nomatch {
			if p.match(name) {
				t.Errorf("%q matches %q; the glob crate does not", tt.pattern, name)
			}
		}
	}
}

// FuzzMemberPatternComponent: compiling any component never panics; a
// pattern with no `[` or `\` matches as path.Match does (the two agree
// on `*` and `?`), and one with no special character only itself.
func FuzzMemberPatternComponent(f *testing.F) {
	for _, s := range [][2]string{{"[!a]*", "bb"}, {"a*b*c", "a_b_c"}, {"[]a]x", "]x"}, {"app-?", "app-1"}, {"[", "x"}, {"***", "x"}, {"plain", "plain"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if strings.Contains(pattern, "/") || strings.Contains(name, "/") || pattern == "**" || !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			return
		}
		p, err := compileComponent(pattern)
		if err != nil {
			return
		}
		got := p.match(name)
		if !strings.ContainsAny(pattern, `[\`) {
			if want, err := path.Match(pattern, name); err == nil && got != want {
				t.Fatalf("%q matching %q: %v; path.Match says %v", pattern, name, got, want)
			}
		}
		if !strings.ContainsAny(pattern, `*?[`) && got != (pattern == name) {
			t.Fatalf("%q matching %q: %v", pattern, name, got)
		}
	})
}

// TestMemberGlobDotEntries: the glob crate offers the special entries `.`
// and `..` to a member pattern component starting with a literal dot when
// it lists a directory, so `crates/.*` matches crates/. and crates/.. as
// well as crates/.hidden; cargo normalizes them to crates and the root. A
// virtual root reached that way (or listed as ".") is passed over, a
// directory without Cargo.toml is refused, and right after `**` (whose
// walked entries are matched by name) the two are never matched. Each case
// is also given to `cargo metadata --offline --no-deps` when cargo is
// installed, which must agree.
func TestMemberGlobDotEntries(t *testing.T) {
	pkg := func(name string) string {
		return "[package]\nname = \"" + name + "\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"
	}
	virtual := func(members string) string { return "[workspace]\nresolver = \"2\"\nmembers = [" + members + "]\n" }
	tests := []struct {
		name  string
		files map[string]string // under ws/ unless they start with ../
		dirs  string            // members' directories relative to ws, by directory
		err   string            // a substring of the refusal
	}{
		{
			name: "crates/.* reaches crates and a virtual root",
			files: map[string]string{
				"Cargo.toml":             virtual(`"crates/.*"`),
				"crates/Cargo.toml":      pkg("cr"),
				"crates/.hid/Cargo.toml": pkg("hid"),
			},
			dirs: "crates crates/.hid",
		},
		{
			name: "crates/.* reaches crates and a root package",
			files: map[string]string{
				"Cargo.toml":             pkg("root") + "\n[workspace]\nmembers = [\"crates/.*\"]\n",
				"crates/Cargo.toml":      pkg("cr"),
				"crates/.hid/Cargo.toml": pkg("hid"),
			},
			dirs: ". crates crates/.hid",
		},
		{
			name: "crates/. has no Cargo.toml",
			files: map[string]string{
				"Cargo.toml":             virtual(`"crates/.*"`),
				"crates/.hid/Cargo.toml": pkg("hid"),
			},
			err: "has no Cargo.toml",
		},
		{
			name: ".? matches .. but not .",
			files: map[string]string{
				"Cargo.toml":             virtual(`"crates/.?"`),
				"crates/.h/Cargo.toml":   pkg("h"),
				"crates/.hid/Cargo.toml": pkg("hid"),
			},
			dirs: "crates/.h",
		},
		{
			name: "never right after **",
			files: map[string]string{
				"Cargo.toml":               virtual(`"crates/**/.*"`),
				"crates/a/.hid/Cargo.toml": pkg("hid"),
				"crates/.top/Cargo.toml":   pkg("top"),
			},
			dirs: "crates/.top crates/a/.hid",
		},
		{
			name: "a literal component after the dot entries",
			files: map[string]string{
				"Cargo.toml":             virtual(`"crates/.*/x"`),
				"crates/x/Cargo.toml":    pkg("x"),
				"crates/.h/x/Cargo.toml": pkg("hx"),
			},
			dirs: "crates/.h/x crates/x",
		},
		{
			name: "[.]* does not start with a literal dot",
			files: map[string]string{
				"Cargo.toml":           virtual(`"crates/[.]*"`),
				"crates/.h/Cargo.toml": pkg("h"),
			},
			dirs: "crates/.h",
		},
		{
			name:  "a virtual root listed as a member",
			files: map[string]string{"Cargo.toml": virtual(`"."`)},
			dirs:  "",
		},
		{
			name: "excluded like any other match",
			files: map[string]string{
				"Cargo.toml":          virtual(`"crates/*", "crates/.*"`) + "exclude = [\"crates\"]\n",
				"crates/a/Cargo.toml": pkg("a"),
			},
			dirs: "",
		},
		{
			name: ".* at the root reaches its parent, which has no Cargo.toml",
			files: map[string]string{
				"Cargo.toml":      virtual(`".*"`),
				".hid/Cargo.toml": pkg("hid"),
			},
			err: "has no Cargo.toml",
		},
		{
			name: ".* at the root reaches a package above it",
			files: map[string]string{
				"Cargo.toml":      virtual(`".*"`),
				".hid/Cargo.toml": pkg("hid"),
				"../Cargo.toml":   pkg("above"),
			},
			err: "is not hierarchically below the workspace root",
		},
	}
	cargo, _ := exec.LookPath("cargo")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			base, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			ws := filepath.Join(base, "ws")
			files := map[string]string{}
			for name, body := range tt.files {
				files[path.Join("ws", name)] = body
				if strings.HasSuffix(name, "Cargo.toml") && body != "" && strings.Contains(body, "[package]") {
					files[path.Join("ws", path.Dir(name), "src/lib.rs")] = ""
				}
			}
			for name, body := range files {
				p := filepath.Join(base, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var got string
			w, err := Load(ws, Options{})
			switch {
			case tt.err != "":
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Errorf("Load: %v, want an error containing %q", err, tt.err)
				}
			case err != nil:
				t.Errorf("Load: %v", err)
			default:
				if len(w.Errors) > 0 {
					t.Errorf("member errors (warnings) cargo does not give: %v", w.Errors)
				}
				var dirs []string
				for _, m := range w.Members {
					dirs = append(dirs, filepath.ToSlash(rel(ws, m.Dir)))
				}
				if got = strings.Join(dirs, " "); got != tt.dirs {
					t.Errorf("members %q, want %q", got, tt.dirs)
				}
			}
			if cargo == "" {
				return
			}
			cmd := exec.Command(cargo, "metadata", "--offline", "--no-deps", "--format-version", "1")
			cmd.Dir = ws
			cmd.Env = append(os.Environ(), "CARGO_TERM_COLOR=never")
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, cerr := cmd.Output()
			if (cerr != nil) != (tt.err != "") {
				t.Fatalf("cargo metadata disagrees with the table (refused: %v): %v\n%s", tt.err != "", cerr, stderr.String())
			}
			if cerr != nil {
				return
			}
			var md struct {
				Packages []struct {
					ManifestPath string `json:"manifest_path"`
				}
			}
			if err := json.Unmarshal(out, &md); err != nil {
				t.Fatal(err)
			}
			var dirs []string
			for _, p := range md.Packages {
				dirs = append(dirs, filepath.ToSlash(rel(ws, filepath.Dir(p.ManifestPath))))
			}
			slices.Sort(dirs)
			if want := strings.Join(dirs, " "); want != tt.dirs {
				t.Errorf("cargo metadata's members %q, the table's %q", want, tt.dirs)
			}
			if strings.Contains(stderr.String(), "warning") {
				t.Errorf("cargo warns, the table expects no warning:\n%s", stderr.String())
			}
		})
	}
}
