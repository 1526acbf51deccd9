// Package tomlstr writes strings as TOML basic strings, for text the user
// pastes into a configuration or manifest file.
package tomlstr

import (
	"fmt"
	"strings"

	"github.com/symposium-dev/symposium-pm/sdk/internal/printable"
)

// Quote returns s as a TOML basic string that reads back as exactly s. A
// quote and a backslash are escaped, and so is every character a terminal
// would not show as it is (printable.Hidden, and DEL), as \uXXXX: the
// text can be printed safely and pasted back unchanged. Invalid UTF-8,
// which TOML cannot hold, becomes U+FFFD.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, c := range strings.ToValidUTF8(s, "\uFFFD") {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 || c == 0x7f || printable.Hidden(c):
			fmt.Fprintf(&b, "\\u%04X", c)
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
