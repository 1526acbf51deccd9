// Package printable makes text that comes from a PM or a package safe to
// show on a terminal.
package printable

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s without what a terminal would interpret rather than
// show: control characters other than newline and tab (an escape sequence
// can clear the screen or retitle the window), the line and paragraph
// separators, and the bidirectional controls that make text display in
// another order than it reads. Invalid UTF-8 becomes U+FFFD. Text with
// none of these is returned as it is, without allocating.
func String(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r == utf8.RuneError || Hidden(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range strings.ToValidUTF8(s, "\uFFFD") {
		if !Hidden(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Hidden reports whether String removes r.
func Hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case unicode.IsControl(r), r == '\u2028', r == '\u2029':
		return true
	case r == '\u200e', r == '\u200f', r == '\u061c': // marks
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069': // embeddings, overrides, isolates
		return true
	}
	return false
}
