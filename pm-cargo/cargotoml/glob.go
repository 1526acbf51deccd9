package cargotoml

import (
	"fmt"
	"unicode/utf8"
)

// A component pattern is one path component of a workspace member pattern,
// compiled as the glob crate cargo uses compiles it (glob::Pattern::new):
//
//   - `?` matches any one character, `*` any sequence (empty included);
//   - `[...]` matches one character in the set, `[!...]` one not in it (a
//     `^` is an ordinary member: `[^a]` is `^` or `a`);
//   - a `]` right after `[` or `[!` belongs to the set (`[]]`, `[!]]`);
//   - `a-z` inside a set is a range, a `-` first or last is itself;
//   - there are no escapes: `\` is an ordinary character;
//   - an unclosed `[`, and `**` anywhere but as a whole component, are
//     errors (`***` too), as they fail cargo's parse of the pattern.
//
// Go's filepath.Match differs on each of `[!`, `[^`, `[]`, `\` and ranges
// written last, so member patterns are matched here instead.
type componentPattern []globToken

type globTokenKind uint8

const (
	globChar globTokenKind = iota
	globAnyChar
	globAnySeq
	globWithin
	globExcept
)

type globToken struct {
	kind globTokenKind
	c    rune
	set  []globRange // globWithin, globExcept
}

// globRange is a single character (lo == hi) or an inclusive range.
type globRange struct{ lo, hi rune }

// compileComponent compiles one component of a member pattern; it must not
// be "**", which the caller expands itself.
func compileComponent(s string) (componentPattern, error) {
	chars := []rune(s)
	var out componentPattern
	for i := 0; i < len(chars); {
		switch chars[i] {
		case '?':
			out = append(out, globToken{kind: globAnyChar})
			i++
		case '*':
			n := 0
			for i < len(chars) && chars[i] == '*' {
				i++
				n++
			}
			if n > 2 {
				return nil, fmt.Errorf("wildcards are either regular `*` or recursive `**`")
			}
			if n == 2 {
				return nil, fmt.Errorf("recursive wildcards must form a single path component")
			}
			out = append(out, globToken{kind: globAnySeq})
		case '[':
			// As glob::Pattern::new: the set's first character (after `!`)
			// is never the closing bracket.
			if i+4 <= len(chars) && chars[i+1] == '!' {
				if j := indexRune(chars[i+3:], ']'); j >= 0 {
					out = append(out, globToken{kind: globExcept, set: parseGlobSet(chars[i+2 : i+3+j])})
					i += j + 4
					continue
				}
			} else if i+3 <= len(chars) && chars[i+1] != '!' {
				if j := indexRune(chars[i+2:], ']'); j >= 0 {
					out = append(out, globToken{kind: globWithin, set: parseGlobSet(chars[i+1 : i+2+j])})
					i += j + 3
					continue
				}
			}
			return nil, fmt.Errorf("invalid range pattern")
		default:
			out = append(out, globToken{kind: globChar, c: chars[i]})
			i++
		}
	}
	return out, nil
}

func indexRune(rs []rune, r rune) int {
	for i, c := range rs {
		if c == r {
			return i
		}
	}
	return -1
}

// parseGlobSet reads the inside of a bracket set: `x-y` is a range,
// anything else (a `-` first or last included) a single character.
func parseGlobSet(s []rune) []globRange {
	var out []globRange
	for i := 0; i < len(s); {
		if i+3 <= len(s) && s[i+1] == '-' {
			out = append(out, globRange{s[i], s[i+2]})
			i += 3
			continue
		}
		out = append(out, globRange{s[i], s[i]})
		i++
	}
	return out
}

// leadingDot reports whether the pattern starts with a literal `.`: the
// glob crate then also offers the special entries `.` and `..` to it when
// it lists a directory (see loader.glob), as no directory listing holds
// them.
func (p componentPattern) leadingDot() bool {
	return len(p) > 0 && p[0].kind == globChar && p[0].c == '.'
}

// match reports whether name (one path component) matches the whole
// pattern, case-sensitively, a leading dot matched by wildcards too (the
// glob crate's default options, which cargo uses). A mismatch after a `*`
// lets that `*` take one more character, in time linear per `*`.
func (p componentPattern) match(name string) bool {
	pi, ni := 0, 0
	star, starAt := -1, 0 // the last `*` seen, and where its match ends
	for {
		if pi < len(p) && p[pi].kind == globAnySeq {
			star, starAt = pi, ni
			pi++
			continue
		}
		if pi < len(p) && ni < len(name) {
			c, n := utf8.DecodeRuneInString(name[ni:])
			if p[pi].matches(c) {
				pi++
				ni += n
				continue
			}
		} else if pi == len(p) && ni == len(name) {
			return true
		}
		if star < 0 || starAt >= len(name) {
			return false
		}
		_, n := utf8.DecodeRuneInString(name[starAt:])
		starAt += n
		pi, ni = star+1, starAt
	}
}

// matches reports whether the one-character token t matches c.
func (t globToken) matches(c rune) bool {
	switch t.kind {
	case globChar:
		return c == t.c
	case globAnyChar:
		return true
	case globWithin:
		return inGlobSet(t.set, c)
	case globExcept:
		return !inGlobSet(t.set, c)
	}
	return false
}

func inGlobSet(set []globRange, c rune) bool {
	for _, r := range set {
		if r.lo <= c && c <= r.hi {
			return true
		}
	}
	return false
}
