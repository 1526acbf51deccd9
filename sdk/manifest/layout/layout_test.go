package layout

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

func TestEnumerateAndEmbeddedSkills(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("reg/a/SYMPOSIUM.toml", "name='a'\n")
	write("reg/a/inner/SKILL.md", "---\n---\n")
	write("reg/deep/x/y/SKILL.md", "---\n---\n")
	write("reg/a-b/SKILL.md", "---\n---\n")
	write("reg/both/SKILL.md", "---\n---\n")
	write("reg/both/SYMPOSIUM.toml", "")
	got, err := Enumerate(filepath.Join(root, "reg"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{{"a", EntryPlugin}, {"a-b", EntrySkill}, {"both", EntryPlugin}, {"deep/x/y", EntrySkill}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
	if _, err := Enumerate(filepath.Join(root, "reg/a")); err == nil {
		t.Error("root-is-entry accepted")
	}
	if got, err := Enumerate(filepath.Join(root, "missing")); err != nil || got != nil {
		t.Errorf("missing root: %v %v", got, err)
	}
	write("pkg/skills/deep/er/SKILL.md", "x")
	if !skill.Embeds(filepath.Join(root, "pkg")) || skill.Embeds(filepath.Join(root, "reg")) {
		t.Error("skill.Embeds wrong")
	}
}

func TestSkillPlugin(t *testing.T) {
	m := SkillPlugin("my-skill", &skill.Skill{Name: "serde-guidance", DependsOn: []string{"serde"}})
	w, _ := m.WireJSON()
	if string(w) != `{"depends-on":["serde"],"name":"serde-guidance","skills":[{"source":{"path":"."}}]}` {
		t.Errorf("got %s", w)
	}
	m = SkillPlugin("my-skill", &skill.Skill{})
	if m.Name != "my-skill" || m.Predicates != nil {
		t.Errorf("got %#v", m)
	}
}

// A bare skill entry is dormant unless its hoisted gate mentions a
// dependency.
func TestSkillPluginDormancy(t *testing.T) {
	// A bare skill: the hoisted gate decides.
	for _, tt := range []struct {
		skill   skill.Skill
		dormant bool
	}{
		{skill.Skill{Name: "s", Description: "d"}, true},
		{skill.Skill{Name: "s", Description: "d", DependsOn: []string{"tokio"}}, false},
		{skill.Skill{Name: "s", Description: "d", Predicates: []string{"battery_pack(cli)"}}, false},
	} {
		p, _ := manifest.Validate(SkillPlugin("dir", &tt.skill), manifest.ValidateOptions{})
		if p == nil || p.RequiresUse != tt.dormant {
			t.Errorf("skill %+v: dormant = %v", tt.skill, p)
		}
	}
}
