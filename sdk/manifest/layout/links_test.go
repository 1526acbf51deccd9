//go:build unix

package layout

import (
	"fmt"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/internal/disktree"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// The walks PMs and `symposium-pm validate` use stay inside the directory
// they are given: a skill linking to a file outside, or a skills directory
// linking to one outside, is neither found nor read.
func TestSkillLinksLeavingTheRoot(t *testing.T) {
	outside := disktree.Write(t, map[string]string{"a/SKILL.md": "---\nname: a\ndescription: d\n---\n"})
	const withSkills = "name = \"p\"\n\n[[skills]]\nsource.path = \"skills\"\n"
	for name, files := range map[string]map[string]string{
		"file link":      {"SYMPOSIUM.toml": withSkills, "skills/x/SKILL.md": "->/etc/passwd"},
		"directory link": {"SYMPOSIUM.toml": withSkills, "skills": "->" + outside},
		"nested link":    {"SYMPOSIUM.toml": withSkills, "skills/x": "->" + outside + "/a"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := disktree.Write(t, files)
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
