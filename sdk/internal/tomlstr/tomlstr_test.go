package tomlstr

import (
	"testing"
	"unicode/utf8"

	"github.com/pelletier/go-toml/v2"
	"github.com/symposium-dev/symposium-pm/sdk/internal/printable"
)

// FuzzQuote: what Quote writes is printable as it is, and a TOML decoder
// reads it back as the string quoted.
func FuzzQuote(f *testing.F) {
	for _, s := range []string{"", "plain", `a "quoted" \ path`, "tab\tnew\nline", "x\x1b[2J\a\x7f", "rtl\u202eoverride", "caf\u00e9 \U0001F600", "bad\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q := Quote(s)
		if printable.String(q) != q {
			t.Fatalf("Quote(%q) = %s holds text a terminal would not show", s, q)
		}
		var doc struct {
			V string `toml:"v"`
		}
		if err := toml.Unmarshal([]byte("v = "+q), &doc); err != nil {
			t.Fatalf("Quote(%q) = %s does not decode: %v", s, q, err)
		}
		if utf8.ValidString(s) && doc.V != s {
			t.Fatalf("Quote(%q) = %s decodes to %q", s, q, doc.V)
		}
	})
}
