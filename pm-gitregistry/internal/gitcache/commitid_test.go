package gitcache

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
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

// TestUpperCaseCommitRef: a full commit id in upper (or mixed) case as the
// ref is the commit, as git reads it, served and recorded in lower case,
// and opens the same cache directory as the lower-case id; it was looked
// up as a branch and not found. An abbreviation stays a name.
func TestUpperCaseCommitRef(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	upper := strings.ToUpper(c1)
	gittest.Run(t, repo.Dir, "rev-parse", "--verify", upper+"^{commit}") // git takes it
	root := t.TempDir()
	for _, ref := range []string{upper, upper[:20] + c1[20:]} {
		c := open(t, root, repo.Dir, ref, "")
		if snap, _, err := c.Update(context.Background(), Check); err != nil || snap.Commit != c1 {
			t.Fatalf("ref %s: %q, %v", ref, snap.Commit, err)
		}
		if lower := Dir(Config{Root: root, Name: "test", URL: repo.Dir, Ref: c1}); c.dir != lower {
			t.Errorf("ref %s: cache %s, the lower-case id's is %s", ref, c.dir, lower)
		}
	}
	for ref, want := range map[string]string{upper: c1, "ABC1234": "ABC1234", upper[:39]: upper[:39], "main": "main", upper + "0": upper + "0"} {
		if got := normalizeRef(ref); got != want {
			t.Errorf("normalizeRef(%q) = %q, want %q", ref, got, want)
		}
	}
}
