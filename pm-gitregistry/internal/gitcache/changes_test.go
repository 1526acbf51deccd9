package gitcache

import (
	"context"
	"reflect"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
)

// TestUpdateChanges: an update reports the paths that differ between the
// commit served before and the new one (files changed, added and removed;
// a directory added, removed or replaced by a file as one path), relative
// to the configured subdir, whether it updated in place or beside the
// previous commit; and reports none when it cannot be exact (the first
// update, a tree with symbolic links).
func TestUpdateChanges(t *testing.T) {
	ctx := context.Background()
	for _, subdir := range []string{"", "reg"} {
		for _, inPlace := range []bool{true, false} {
			name := "subdir=" + subdir
			if !inPlace {
				name += "/roots-in-use"
			}
			t.Run(name, func(t *testing.T) {
				pre := ""
				if subdir != "" {
					pre = subdir + "/"
				}
				repo := gittest.NewRepo(t)
				repo.Write(map[string]string{
					"outside.txt":           "x",
					pre + "a/SKILL.md":      "a",
					pre + "b/SKILL.md":      "b",
					pre + "gone/x/SKILL.md": "x",
					pre + "dir/f":           "f",
					pre + "keep/deep/k":     "k",
				})
				repo.Commit("first")
				bare := repo.Bare()
				root := t.TempDir()
				c, err := Open(ctx, Config{Root: root, Name: "changes", URL: bare, Subdir: subdir, Logger: testLogger(t)})
				if err != nil {
					t.Fatal(err)
				}
				defer func() { c.Close() }()
				if _, changed, ch, err := c.UpdateChanges(ctx, Check); err != nil || !changed || ch != nil {
					t.Fatalf("first update: changed %v, changes %v, %v; want changed and no changes", changed, ch, err)
				}
				if inPlace {
					c.Close()
					if c, err = Open(ctx, Config{Root: root, Name: "changes", URL: bare, Subdir: subdir, Logger: testLogger(t)}); err != nil {
						t.Fatal(err)
					}
				}
				before, _ := c.Served()
				repo.Remove(pre+"gone", pre+"dir")
				repo.Write(map[string]string{
					"outside.txt":        "changed outside",
					pre + "a/SKILL.md":   "a2",
					pre + "new/SKILL.md": "n",
					pre + "dir":          "now a file",
				})
				repo.Commit("change")
				repo.Push(bare)
				_, changed, ch, err := c.UpdateChanges(ctx, Check)
				if err != nil || !changed || ch == nil {
					t.Fatalf("update: changed %v, changes %v, %v", changed, ch, err)
				}
				want := &Changes{From: before.Commit, Paths: []ChangedPath{{Path: "a/SKILL.md"}, {Path: "dir", Dir: true}, {Path: "new", Dir: true}}}
				if subdir == "" {
					want.Paths = append(want.Paths, ChangedPath{Path: "outside.txt"})
				}
				want.Paths = append(want.Paths, ChangedPath{Path: "gone", Dir: true})
				if !reflect.DeepEqual(ch, want) {
					t.Errorf("changes %+v\nwant %+v", ch, want)
				}

				repo.Write(map[string]string{pre + "b/link.md": "->SKILL.md"})
				repo.Commit("link")
				repo.Push(bare)
				if _, changed, ch, err := c.UpdateChanges(ctx, Check); err != nil || !changed || ch != nil {
					t.Errorf("update adding a symbolic link: changed %v, changes %+v, %v; want changed and no changes", changed, ch, err)
				}
			})
		}
	}
}
