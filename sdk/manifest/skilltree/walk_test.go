//go:build unix

package skilltree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/internal/disktree"
)

func TestWalkSkills(t *testing.T) {
	outside := disktree.Write(t, map[string]string{"a/SKILL.md": "x", "SKILL.md": "x"})
	const skill = "---\nname: s\ndescription: d\n---\n"
	tests := []struct {
		name     string
		files    map[string]string
		groups   []string
		lim      Limits
		skills   []string
		problems []string // substrings, one per problem, in order
		bound    string
		deep     string
	}{
		{name: "plain", files: map[string]string{"skills/a/SKILL.md": skill, "skills/b/c/SKILL.md": skill, "skills/README.md": "x"},
			groups: []string{"skills"}, skills: []string{"skills/a/SKILL.md", "skills/b/c/SKILL.md"}},
		{name: "missing group", files: map[string]string{"x": "x"}, groups: []string{"skills"}},
		{name: "group is the root", files: map[string]string{"SKILL.md": skill, "deeper/SKILL.md": skill},
			groups: []string{"."}, skills: []string{"SKILL.md"}},
		{name: "nested skill not counted", files: map[string]string{"skills/a/SKILL.md": skill, "skills/a/sub/SKILL.md": skill},
			groups: []string{"skills"}, skills: []string{"skills/a/SKILL.md"}},
		{name: "marker skips an installed copy", files: map[string]string{"skills/a/SKILL.md": skill, "skills/b/.symposium": "", "skills/b/SKILL.md": skill},
			groups: []string{"skills"}, skills: []string{"skills/a/SKILL.md"}},
		{name: "two groups overlapping count once", files: map[string]string{"skills/a/SKILL.md": skill},
			groups: []string{"skills", "skills"}, skills: []string{"skills/a/SKILL.md"}},
		// Links: inside the root they are followed; out of it, never.
		{name: "link to a file outside", files: map[string]string{"skills/x/SKILL.md": "->/etc/passwd", "skills/y/SKILL.md": skill},
			groups: []string{"skills"}, skills: []string{"skills/y/SKILL.md"},
			problems: []string{"skills/x/SKILL.md leads outside the plugin root"}},
		{name: "relative link to a file outside", files: map[string]string{"skills/x/SKILL.md": "->../../../" + filepath.Base(outside) + "/SKILL.md"},
			groups: []string{"skills"}, problems: []string{"skills/x/SKILL.md leads outside the plugin root"}},
		{name: "link to a directory outside", files: map[string]string{"skills/out": "->" + outside, "skills/in/SKILL.md": skill},
			groups: []string{"skills"}, skills: []string{"skills/in/SKILL.md"},
			problems: []string{"skills/out leads outside the plugin root"}},
		{name: "group itself links outside", files: map[string]string{"skills": "->" + outside},
			groups: []string{"skills"}, problems: []string{"skills leads outside the plugin root"}},
		{name: "links inside are followed", files: map[string]string{"real/a/SKILL.md": skill, "skills/a": "->../real/a", "skills/b/SKILL.md": "->../../real/a/SKILL.md"},
			groups: []string{"skills"}, skills: []string{"skills/a/SKILL.md", "skills/b/SKILL.md"}},
		{name: "link cycle ends", files: map[string]string{"skills/a/loop": "->..", "skills/a/SKILL.md": skill},
			groups: []string{"skills"}, skills: []string{"skills/a/SKILL.md"}},
		{name: "dangling link ignored", files: map[string]string{"skills/a/SKILL.md": "->nowhere"}, groups: []string{"skills"}},
		{name: "a fifo named SKILL.md is not read", files: map[string]string{"skills/a/SKILL.md": "fifo"},
			groups: []string{"skills"}, problems: []string{"skills/a/SKILL.md is not a regular file"}},
		{name: "a directory named SKILL.md", files: map[string]string{"skills/a/SKILL.md": "dir"},
			groups: []string{"skills"}, problems: []string{"skills/a/SKILL.md is not a regular file"}},
		// Bounds.
		{name: "depth bound", files: map[string]string{"skills/1/2/3/4/SKILL.md": skill, "skills/x/SKILL.md": skill},
			groups: []string{"skills"}, lim: Limits{Depth: 3}, skills: []string{"skills/x/SKILL.md"}, deep: "skills/1/2/3/4"},
		{name: "entry bound", files: manySkills(50), groups: []string{"skills"}, lim: Limits{Entries: 20},
			bound: "the bound of 20 directory entries"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := disktree.Write(t, tt.files)
			root, err := os.OpenRoot(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			res := Walk(context.Background(), root, tt.groups, tt.lim)
			if tt.bound == "" && !slices.Equal(sorted(res.Skills), sorted(tt.skills)) {
				t.Errorf("skills = %q, want %q", res.Skills, tt.skills)
			}
			if tt.bound != "" && len(res.Skills) >= 50 {
				t.Errorf("counted %d skills past the bound", len(res.Skills))
			}
			if len(res.Problems) != len(tt.problems) {
				t.Fatalf("problems = %q, want %d like %q", res.Problems, len(tt.problems), tt.problems)
			}
			for i, want := range tt.problems {
				if !strings.Contains(res.Problems[i], want) {
					t.Errorf("problem %d = %q, want it to contain %q", i, res.Problems[i], want)
				}
			}
			if res.Bound != tt.bound {
				t.Errorf("bound = %q, want %q", res.Bound, tt.bound)
			}
			if res.Deep != tt.deep {
				t.Errorf("deep = %q, want %q", res.Deep, tt.deep)
			}
		})
	}
}

// The walk is bounded however big the tree: a root at / is not walked in
// full, the walk stops at a bound and says which.
func TestWalkSkillsOfTheWholeMachineStops(t *testing.T) {
	root, err := os.OpenRoot("/")
	if err != nil {
		t.Skip(err)
	}
	defer root.Close()
	res := Walk(context.Background(), root, []string{"."}, Limits{Entries: 2000})
	if res.Bound == "" {
		t.Fatalf("walking / finished without reaching a bound: %d skills, %d problems", len(res.Skills), res.NProblems)
	}
	if len(res.Problems) > MaxProblems {
		t.Errorf("%d problems kept, want at most %d", len(res.Problems), MaxProblems)
	}
}

func TestWalkSkillsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root, err := os.OpenRoot(disktree.Write(t, manySkills(3)))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if res := Walk(ctx, root, []string{"skills"}, Limits{}); res.Bound != "discovery was cancelled" || len(res.Skills) != 0 {
		t.Errorf("walk after cancel: %+v", res)
	}
}

func manySkills(n int) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("skills/s%03d/SKILL.md", i)] = "---\nname: s\ndescription: d\n---\n"
	}
	return m
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
