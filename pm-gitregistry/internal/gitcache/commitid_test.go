package gitcache

import (
	"regexp"
	"strings"
	"testing"
)

// TestIsCommitID pins what a full commit id is: exactly 40 lower-case hex
// digits, nothing before or after.
func TestIsCommitID(t *testing.T) {
	const id = "81348708bb4c70c64bcc5a1922a498cf9cc18b79"
	for _, tc := range []struct {
		s    string
		want bool
	}{
		{id, true},
		{strings.Repeat("0", 40), true},
		{strings.Repeat("f", 40), true},
		{"", false},
		{id[:39], false},
		{id + "0", false},
		{strings.ToUpper(id), false},
		{id[:39] + "g", false},
		{id[:39] + "/", false},
		{id[:39] + ":", false},
		{id[:39] + "`", false},
		{id[:39] + "\n", false},
		{id[:38] + "é", false}, // 40 bytes, 39 runes
		{" " + id[1:], false},
	} {
		if got := IsCommitID(tc.s); got != tc.want {
			t.Errorf("IsCommitID(%q) = %v, want %v", tc.s, got, tc.want)
		}
	}
}

// FuzzIsCommitID checks IsCommitID against the regular expression it
// replaced, ^[0-9a-f]{40}$.
func FuzzIsCommitID(f *testing.F) {
	re := regexp.MustCompile(`^[0-9a-f]{40}$`)
	for _, s := range []string{"", "81348708bb4c70c64bcc5a1922a498cf9cc18b79", "81348708BB4C70C64BCC5A1922A498CF9CC18B79", "81348708bb4c70c64bcc5a1922a498cf9cc18b7\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := IsCommitID(s), re.MatchString(s); got != want {
			t.Errorf("IsCommitID(%q) = %v, the expression says %v", s, got, want)
		}
	})
}
