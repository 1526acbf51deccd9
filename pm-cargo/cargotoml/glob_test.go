package cargotoml

import (
	"path"
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
