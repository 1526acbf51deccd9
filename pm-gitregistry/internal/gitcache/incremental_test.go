//go:build unix

package gitcache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
)

// writeCounter is a Config.BeforeWrite hook counting the bytes written
// into commit directories being materialized, and into the repository.
type writeCounter struct {
	mu           sync.Mutex
	commit, repo int64
}

func (w *writeCounter) hook(path string, n int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	sep := string(filepath.Separator)
	switch {
	case strings.Contains(path, sep+"commits"+sep+".tmp-"):
		w.commit += int64(n)
	case strings.Contains(path, sep+"repo"+sep):
		w.repo += int64(n)
	}
	return nil
}

func (w *writeCounter) take() (commit, repo int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	commit, repo = w.commit, w.repo
	w.commit, w.repo = 0, 0
	return commit, repo
}

// TestUpdateWritesTheChange is issue 19 item 3: a refresh after a one-file
// change writes in proportion to the change, linking the unchanged files
// from the previous commit's directory, while each commit's directory stays
// complete and the previous one stays valid.
func TestUpdateWritesTheChange(t *testing.T) {
	const entries, size = 200, 4 << 10
	repo := gittest.NewRepo(t)
	src := map[string]string{}
	for i := range entries {
		src[fmt.Sprintf("e%03d/SKILL.md", i)] = "---\nname: e\ndescription: d\n---\n" + randomText(uint64(i), size)
	}
	repo.Write(src)
	c1 := repo.Commit("first")
	bare := repo.Bare()

	for _, subdir := range []string{"", "reg"} {
		t.Run("subdir="+subdir, func(t *testing.T) {
			if subdir != "" {
				// The same registry below a subdir, beside a file outside it.
				r := gittest.NewRepo(t)
				moved := map[string]string{"outside.txt": "x"}
				for k, v := range src {
					moved[subdir+"/"+k] = v
				}
				r.Write(moved)
				c1 = r.Commit("first")
				bare = r.Bare()
				repo = r
			}
			count := &writeCounter{}
			c, err := Open(context.Background(), Config{Root: t.TempDir(), Name: "inc", URL: bare, Subdir: subdir, Logger: testLogger(t), BeforeWrite: count.hook})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s1, _, err := c.Update(context.Background(), Fetch)
			if err != nil || s1.Commit != c1 {
				t.Fatalf("first update: %+v %v", s1, err)
			}
			full, _ := count.take()
			if full < entries*size {
				t.Fatalf("first update wrote %d bytes into the commit directory, want at least %d", full, entries*size)
			}

			changed := "---\nname: e\ndescription: changed\n---\n" + randomText(999, size)
			prefix := ""
			if subdir != "" {
				prefix = subdir + "/"
			}
			repo.Write(map[string]string{prefix + "e100/SKILL.md": changed, prefix + "new/SKILL.md": "---\nname: n\ndescription: new\n---\n"})
			repo.Remove(prefix + "e007")
			c2 := repo.Commit("change")
			repo.Push(bare)
			s2, changedCommit, err := c.Update(context.Background(), Check)
			if err != nil || !changedCommit || s2.Commit != c2 {
				t.Fatalf("second update: %+v %v %v", s2, changedCommit, err)
			}
			wrote, fetched := count.take()
			if limit := int64(2 * len(changed)); wrote > limit {
				t.Fatalf("an update changing one file wrote %d bytes into the commit directory, want at most %d", wrote, limit)
			}
			if limit := int64(16 * len(changed)); fetched > limit {
				t.Fatalf("an update changing one file wrote %d bytes into the repository, want at most %d", fetched, limit)
			}
			t.Logf("one-file change: %d bytes written into the commit directory, %d into the repository (first update: %d)", wrote, fetched, full)
			if subdir == "" {
				checkTree(t, repo.Dir, c2, s2.Dir)
			} else if got, want := files(t, s2.Dir), lsTree(t, repo.Dir, c2, subdir); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("materialized files\n got %v\nwant %v", got, want)
			}
			// The previous commit's directory is intact and unchanged.
			b, err := os.ReadFile(filepath.Join(s1.Dir, "e100", "SKILL.md"))
			if err != nil || string(b) != src["e100/SKILL.md"] {
				t.Fatalf("previous commit's file changed: %v", err)
			}
			if _, err := os.Stat(filepath.Join(s1.Dir, "e007", "SKILL.md")); err != nil {
				t.Fatalf("previous commit lost a removed entry: %v", err)
			}
			if _, err := os.Stat(filepath.Join(s2.Dir, "e007")); !os.IsNotExist(err) {
				t.Fatalf("removed entry present in the new commit: %v", err)
			}
		})
	}
}
