package manifest

import (
	"testing"
)

func TestScanTOMLLines(t *testing.T) {
	src := `# comment line 1
name = "x"   # line 2
depends-on = [
  "a",        # line 4
  "b",
]
description = """
multi
line = not a key
"""
"quoted key" = 1
[[hooks]]
name = "h0"
command = { script = "s.sh", args = ["--x"] }

[[hooks]]                     # line 16
name = "h1"
requirements = [
  "r",
  { install_commands = ["true"] },
]
[[skills]]
source.path = "p"
[skills.extra]
k = 1
[subcommand.greet]
description = 'it is'
[subcommand."with space"]
audience = "humans"
dt = 1979-05-27 07:32:00
after = true
`
	lines := scanTOMLLines([]byte(src))
	tests := map[string]int{
		"name":                     2,
		"depends-on":               3,
		"depends-on[1]":            5,
		"description":              7,
		"quoted key":               11,
		"hooks":                    12,
		"hooks[0]":                 12,
		"hooks[0].name":            13,
		"hooks[0].command":         14,
		"hooks[0].command.args":    14,
		"hooks[1]":                 16,
		"hooks[1].name":            17,
		"hooks[1].requirements":    18,
		"hooks[1].requirements[1]": 20,
		"hooks[1].requirements[1].install_commands": 20,
		"skills[0].source.path":                     23,
		"skills[0].extra":                           24,
		"skills[0].extra.k":                         25,
		"subcommand.greet":                          26,
		"subcommand.greet.description":              27,
		"subcommand.with space.audience":            29,
		"subcommand.with space.dt":                  30,
		"subcommand.with space.after":               31,
	}
	for field, want := range tests {
		if got := lookupLine(lines, field); got != want {
			t.Errorf("line of %s = %d, want %d", field, got, want)
		}
	}
	if got := lookupLine(lines, "hooks[0].command.script.deeper"); got != 14 {
		t.Errorf("nearest ancestor: %d", got)
	}
	if got := lookupLine(lines, "nothing.here"); got != 0 {
		t.Errorf("unknown field: %d", got)
	}
	if _, ok := lines["line"]; ok {
		t.Error("a line inside a multi-line string was read as a key")
	}
}

// The scanner never panics or loops on garbage (it only runs on documents
// the TOML decoder accepted, but must still stop on anything).
func TestScanTOMLLinesGarbage(t *testing.T) {
	for _, src := range []string{"", "[", "[[", "a", "a =", "a = [", "a = {", "a = \"", "a = '''", "= 1", "[a.]", "a.b.", "\"k", "[[a]]]"} {
		scanTOMLLines([]byte(src))
	}
}
