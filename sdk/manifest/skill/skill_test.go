package skill

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
)

func TestParseSkillMDErrors(t *testing.T) {
	long := strings.Repeat("x", manifest.MaxDescription+1)
	tests := []struct {
		name, in string
		strict   bool
		want     string // Error text
	}{
		{"no front matter", "# Title\n", true, "line 1: SKILL.md must start with front matter between --- lines"},
		{"no closing fence", "---\nname: x\ndescription: y\n", true, "line 1: SKILL.md front matter has no closing --- line"},
		{"invalid yaml", "---\nname: x\ndescription: [Critical] text\n---\n", true, "line 3: front matter is not valid YAML: did not find expected key"},
		{"number value", "---\nname: x\ndescription: y\nversion: 1.0\n---\n", true, `line 4: version: must be a string, found a number (quote the value)`},
		{"bool value", "---\nname: x\ndescription: y\nuser-invocable: true\n---\n", true, `line 4: user-invocable: must be a string, found a boolean (quote the value)`},
		{"null value", "---\nname: x\ndescription:\n---\n", true, `line 3: description: must be a string, found null (quote the value)`},
		{"list value", "---\nname: x\ndescription: y\ntags:\n  - a\n---\n", true, `line 5: tags: must be a string, found a list (quote the value)`},
		{"not a mapping", "---\n- a\n- b\n---\n", true, "line 2: front matter must be a mapping of keys to strings"},
		{"duplicate", "---\nname: x\nname: y\ndescription: d\n---\n", true, "line 3: name: duplicate field"},
		{"crates retired", "---\nname: x\ndescription: y\ncrates: serde, tokio\n---\n", true, "line 4: crates: crates was renamed: write depends-on: serde, tokio"},
		{"crates retired, a flow list", "---\nname: x\ndescription: y\ncrates: [serde, tokio]\n---\n", true, "line 4: crates: crates was renamed: write depends-on: serde, tokio"},
		{"crates retired, a block list", "---\nname: x\ndescription: y\ncrates:\n  - serde\n---\n", true, "line 4: crates: crates was renamed: write depends-on: serde"},
		{"crates retired, a mapping", "---\nname: x\ndescription: y\ncrates:\n  a: b\n---\n", true, "line 5: crates: must be a string, found a mapping (quote the value)"},
		{"bad atom", "---\nname: x\ndescription: y\ndepends-on: serde >=1\n---\n", true, `line 4: depends-on: "serde >=1": unexpected trailing input ">=1"; an atom has no spaces, write "serde>=1"`},
		{"bad predicate", "---\nname: x\ndescription: y\npredicates: serde\n---\n", true, `line 4: predicates: "serde" is not a function call (write e.g. depends-on(serde))`},
		{"missing name", "---\ndescription: y\n---\n", true, "line 1: name: SKILL.md front matter is missing name"},
		{"missing description", "---\nname: x\n---\n", true, "line 1: description: SKILL.md needs a non-empty description"},
		{"blank description", "---\nname: x\ndescription: '   '\n---\n", true, "line 3: description: SKILL.md needs a non-empty description"},
		{"long description", "---\nname: x\ndescription: " + long + "\n---\n", true, "line 3: description: description is 1025 bytes long; the limit is 1024"},
		{"lenient still checks a given description", "---\ndescription: ''\n---\n", false, "line 2: description: SKILL.md needs a non-empty description"},
		{"lenient invalid yaml", "---\nname: [x\n---\n", false, "line 2: front matter is not valid YAML: did not find expected ',' or ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.in), tt.strict)
			if err == nil {
				t.Fatal("accepted")
			}
			if err.Error() != tt.want {
				t.Errorf("got  %s\nwant %s", err, tt.want)
			}
		})
	}
}

func TestParseSkillMDAccepts(t *testing.T) {
	tests := []struct {
		name, in string
		strict   bool
		want     Skill
	}{
		{"comma lists", "---\nname: x\ndescription: d\ndepends-on: a, b>=1, ,c\npredicates: any(env(A), env(B)), not(env(CI))\n---\n", true,
			Skill{Name: "x", Description: "d", DependsOn: []string{"a", "b>=1", "c"}, Predicates: []string{"any(env(A), env(B))", "not(env(CI))"}}},
		{"quoted name stripped", "---\nname: '\"quoted\"'\ndescription: d\n---\n", true, Skill{Name: "quoted", Description: "d"}},
		{"leading blank lines", "\n\n  ---\nname: x\ndescription: d\n---\nbody", true, Skill{Name: "x", Description: "d"}},
		{"unquoted date is a string", "---\nname: x\ndescription: d\nupdated: 2024-01-31\n---\n", true, Skill{Name: "x", Description: "d", Fields: map[string]string{"updated": "2024-01-31"}}},
		{"quoted number is a string", "---\nname: x\ndescription: d\nversion: \"1.0\"\n---\n", true, Skill{Name: "x", Description: "d", Fields: map[string]string{"version": "1.0"}}},
		{"lenient without front matter", "Just notes.\n", false, Skill{}},
		{"lenient without name", "---\ndescription: d\n---\n", false, Skill{Description: "d"}},
		{"lenient empty block", "---\n---\n", false, Skill{}},
		{"closing fence may carry text", "---\nname: x\ndescription: d\n----- end\n", true, Skill{Name: "x", Description: "d"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse([]byte(tt.in), tt.strict)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*s, tt.want) {
				t.Errorf("got %#v", *s)
			}
		})
	}
}

func TestScanSkills(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{
		"a/SKILL.md", "a/nested/SKILL.md", "b/c/SKILL.md", "installed/SKILL.md", "installed/.symposium", "d/skill.md",
	} {
		p := filepath.Join(root, "group", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, f := range Scan(filepath.Join(root, "group")) {
		rel, _ := filepath.Rel(root, f)
		got = append(got, filepath.ToSlash(rel))
	}
	want := []string{"group/a/SKILL.md", "group/b/c/SKILL.md"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v", got)
	}
	if err := os.WriteFile(filepath.Join(root, "group", "SKILL.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Scan(filepath.Join(root, "group")); len(got) != 1 {
		t.Errorf("a SKILL.md at the group root hides the rest: %v", got)
	}
	if got := Scan(filepath.Join(root, "missing")); got != nil {
		t.Errorf("missing dir: %v", got)
	}
}

func TestStripYAMLLine(t *testing.T) {
	for msg, want := range map[string]string{
		"yaml: line 3: did not find expected key":                       "did not find expected key",
		"yaml: line 12: mapping values are not allowed in this context": "mapping values are not allowed in this context",
		"yaml: control characters are not allowed":                      "yaml: control characters are not allowed",
		"yaml: line x: odd": "yaml: line x: odd",
		"yaml: line : odd":  "yaml: line : odd",
	} {
		if got := stripYAMLLine(msg); got != want {
			t.Errorf("stripYAMLLine(%q) = %q, want %q", msg, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	good := "---\nname: gizmo-wiring\ndescription: How to wire gizmo components safely\ndepends-on: gizmo>=0.4, gizmo-net\npredicates: not(env(CI)), path_exists(gizmo.toml)\nlicense: MIT\n---\n\nBody.\n"
	s, err := Parse([]byte(good), true)
	if err != nil {
		t.Fatal(err)
	}
	want := &Skill{Name: "gizmo-wiring", Description: "How to wire gizmo components safely",
		DependsOn: []string{"gizmo>=0.4", "gizmo-net"}, Predicates: []string{"not(env(CI))", "path_exists(gizmo.toml)"},
		Fields: map[string]string{"license": "MIT"}}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %#v", s)
	}
	s, err = Parse([]byte("just notes\n"), false)
	if err != nil || s.Name != "" {
		t.Errorf("lenient no front matter: %#v %v", s, err)
	}
}
