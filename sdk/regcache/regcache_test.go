package regcache

import (
	"strings"
	"testing"
)

func TestNamePart(t *testing.T) {
	tests := map[string]string{
		"team":                   "team",
		"my team/plugins":        "my_team_plugins",
		"":                       "registry",
		"..":                     "registry",
		"é":                      "_",
		strings.Repeat("a", 100): strings.Repeat("a", 48),
	}
	for in, want := range tests {
		if got := NamePart(in); got != want {
			t.Errorf("NamePart(%q) = %q, want %q", in, got, want)
		}
	}
}
