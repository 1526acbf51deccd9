//go:build unix

package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// tree builds files (path → content; content "->target" makes a symbolic
// link, "dir" an empty directory, "fifo" a named pipe) under a new root.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		var err error
		switch {
		case strings.HasPrefix(c, "->"):
			err = os.Symlink(strings.TrimPrefix(c, "->"), full)
		case c == "dir":
			err = os.MkdirAll(full, 0o755)
		case c == "fifo":
			err = syscall.Mkfifo(full, 0o644)
		default:
			err = os.WriteFile(full, []byte(c), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The walks PMs and `symposium-pm validate` use stay inside the directory
// they are given: a skill linking to a file outside, or a skills directory
// linking to one outside, is neither found nor read.
func TestSkillLinksLeavingTheRoot(t *testing.T) {
	outside := tree(t, map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n"})
	const withSkills = "name = \"p\"\n\n[[skills]]\nsource.path = \"skills\"\n"
	for name, files := range map[string]map[string]string{
		"file link":      {"SYMPOSIUM.toml": withSkills, "skills/x/SKILL.md": "->/etc/passwd"},
		"directory link": {"SYMPOSIUM.toml": withSkills, "skills": "->" + outside},
		"nested link":    {"SYMPOSIUM.toml": withSkills, "skills/x": "->" + outside + "/a"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := tree(t, files)
			if skill.Embeds(dir) {
				t.Error("skill.Embeds found a skill outside the package")
			}
			if got := skill.Scan(dir); len(got) != 0 {
				t.Errorf("skill.Scan = %q", got)
			}
			reps, err := CheckPath(dir, CheckOptions{Origin: manifest.OriginPackage})
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) != 1 || reps[0].Valid || !strings.Contains(fmt.Sprint(reps[0].Problems), "leads outside the plugin root") {
				t.Errorf("CheckPath: %+v, want invalid, naming the link leading outside", reps)
			}
		})
	}
}
