//go:build unix

package gitcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
)

// inPlaceRepo is a registry of 50 entries beside files whose kind and mode
// the change below turns over.
func inPlaceRepo(t *testing.T) (*gittest.Repo, string) {
	repo := gittest.NewRepo(t)
	src := map[string]string{
		"exe.sh":         "#!/bin/sh\n",
		"f2d":            "a file that becomes a directory\n",
		"d2f/a.txt":      "a directory that becomes a file\n",
		"d/x/file.txt":   "nested\n",
		"gone/deep/x.md": "removed with its directory\n",
	}
	for i := range 50 {
		src[fmt.Sprintf("e%03d/SKILL.md", i)] = "---\nname: e\ndescription: d\n---\n" + randomText(uint64(i), 512)
	}
	repo.Write(src)
	repo.Commit("first")
	return repo, repo.Bare()
}

// change makes one change of every kind and pushes it.
func change(t *testing.T, repo *gittest.Repo, bare string) (string, string) {
	changed := "---\nname: e\ndescription: changed\n---\n" + randomText(999, 512)
	repo.Remove("e007", "f2d", "d2f", "gone")
	repo.Write(map[string]string{
		"e010/SKILL.md":   changed,
		"new/SKILL.md":    "---\nname: n\ndescription: new\n---\n",
		"f2d/inner.txt":   "now a directory\n",
		"d2f":             "now a file\n",
		"d/x/y/added.txt": "added deeper\n",
	})
	if err := os.Chmod(filepath.Join(repo.Dir, "exe.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := repo.Commit("change")
	repo.Push(bare)
	return c, changed
}

// fetchAndClose fetches bare into a cache at root from one process that then
// closes the cache, as a refresh run does, and returns the snapshot.
func fetchAndClose(t *testing.T, root, bare string) Snapshot {
	t.Helper()
	ctx := context.Background()
	first, err := Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := first.Update(ctx, Fetch)
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	return s
}

// TestUpdateInPlace is issue 19 item 3: a refresh in a process that handed
// out no root, with no other process on the cache, turns the previous
// commit's directory into the new one, touching only what changed (as git
// checkout does), and the result is the new commit's tree exactly.
func TestUpdateInPlace(t *testing.T) {
	repo, bare := inPlaceRepo(t)
	root := t.TempDir()
	ctx := context.Background()
	s1 := fetchAndClose(t, root, bare)

	c2, changed := change(t, repo, bare)
	count := &writeCounter{}
	c, err := Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t), BeforeWrite: count.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s2, moved, err := c.Update(ctx, Check)
	if err != nil || !moved || s2.Commit != c2 {
		t.Fatalf("update: %+v %v %v", s2, moved, err)
	}
	checkTree(t, repo.Dir, c2, s2.Dir)
	if fi, err := os.Stat(filepath.Join(s2.Dir, "exe.sh")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("exe.sh: %v %v", fi, err)
	}
	// The previous directory became the new one: nothing was copied or linked.
	if _, err := os.Stat(s1.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("previous commit's directory still there (%v): the update did not happen in place", err)
	}
	if wrote, _ := count.take(); wrote > int64(2*len(changed)+200) {
		t.Fatalf("an update in place wrote %d bytes into the commit directory, want at most %d", wrote, 2*len(changed)+200)
	}
	// A later update in place goes on from there.
	repo.Write(map[string]string{"e020/SKILL.md": "---\nname: e\ndescription: third\n---\n"})
	c3 := repo.Commit("third")
	repo.Push(bare)
	c.Close()
	c, err = Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	s3, _, err := c.Update(ctx, Check)
	if err != nil || s3.Commit != c3 {
		t.Fatalf("third update: %+v %v", s3, err)
	}
	checkTree(t, repo.Dir, c3, s3.Dir)
}

// TestUpdateInPlaceOnlyWhenAlone: the previous commit's directory is kept,
// and the new commit materialized beside it, when its roots may be in use:
// handed out by this Cache, or with another process on the cache.
func TestUpdateInPlaceOnlyWhenAlone(t *testing.T) {
	for _, tc := range []string{"handed-out", "other-process"} {
		t.Run(tc, func(t *testing.T) {
			repo, bare := inPlaceRepo(t)
			root := t.TempDir()
			ctx := context.Background()
			cfg := Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t)}
			c, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			s1, _, err := c.Update(ctx, Fetch)
			if err != nil {
				t.Fatal(err)
			}
			if tc == "other-process" {
				c.Close()
				other, err := Open(ctx, cfg) // holds the cache, as another process would
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
				if c, err = Open(ctx, cfg); err != nil {
					t.Fatal(err)
				}
				defer c.Close()
			}
			before := files(t, s1.Dir)
			c2, _ := change(t, repo, bare)
			s2, _, err := c.Update(ctx, Check)
			if err != nil || s2.Commit != c2 {
				t.Fatalf("update: %+v %v", s2, err)
			}
			checkTree(t, repo.Dir, c2, s2.Dir)
			if got := files(t, s1.Dir); strings.Join(got, " ") != strings.Join(before, " ") {
				t.Fatalf("previous commit's directory changed under its roots:\n got %v\nwant %v", got, before)
			}
		})
	}
}

// TestUpdateInPlaceDiskFull: when the changed files cannot be written, the
// update fails naming the cause, the previous commit's directory is left as
// it was and stays the one served, and a later update succeeds.
func TestUpdateInPlaceDiskFull(t *testing.T) {
	repo, bare := inPlaceRepo(t)
	root := t.TempDir()
	ctx := context.Background()
	s1 := fetchAndClose(t, root, bare)
	before := files(t, s1.Dir)
	c2, _ := change(t, repo, bare)

	full := func(p string, n int) error {
		if strings.Contains(p, string(filepath.Separator)+"commits"+string(filepath.Separator)) {
			return syscall.ENOSPC
		}
		return nil
	}
	c, err := Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t), BeforeWrite: full})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Update(ctx, Check)
	var we *WriteError
	if !errors.As(err, &we) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("update on a full disk: %v, want a WriteError for ENOSPC", err)
	}
	if got := files(t, s1.Dir); strings.Join(got, " ") != strings.Join(before, " ") {
		t.Fatalf("previous commit's directory changed by a failed update:\n got %v\nwant %v", got, before)
	}
	if cur, err := c.Current(ctx); err != nil || cur.Commit != s1.Commit {
		t.Fatalf("after a failed update: %+v %v, want the previous commit", cur, err)
	}
	c.Close()
	c, err = Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s2, _, err := c.Update(ctx, Check)
	if err != nil || s2.Commit != c2 {
		t.Fatalf("update after the disk was freed: %+v %v", s2, err)
	}
	checkTree(t, repo.Dir, c2, s2.Dir)
}

// TestUpdateInPlaceSymlinks: a tree with symbolic links is materialized in
// full (a change can make a kept link dangle), and comes out right.
func TestUpdateInPlaceSymlinks(t *testing.T) {
	repo, bare := inPlaceRepo(t)
	repo.Write(map[string]string{"d/link.txt": "->x/file.txt"})
	repo.Commit("link")
	repo.Push(bare)
	root := t.TempDir()
	ctx := context.Background()
	s1 := fetchAndClose(t, root, bare)
	repo.Remove("d/x")
	c2 := repo.Commit("the link's target removed")
	repo.Push(bare)
	c, err := Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s2, _, err := c.Update(ctx, Check)
	if err != nil || s2.Commit != c2 {
		t.Fatalf("update: %+v %v", s2, err)
	}
	if _, err := os.Lstat(filepath.Join(s2.Dir, "d", "link.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("dangling link kept: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s1.Dir, "d", "link.txt")); err != nil {
		t.Fatalf("previous commit's link: %v", err)
	}
}

// TestUpdateInPlaceNotFromTreeWithDroppedLink: a symbolic link dropped
// when the previous commit was materialized (it dangled) still makes the
// tree one with links: when the next commit adds the link's target, the
// update materializes it whole, keeping the link, as a fresh cache does,
// rather than updating the previous directory in place (which looks only
// at the entries that changed and would leave the link missing: the same
// commit served with different content depending on the cache's history).
// Nor does it report changes to derive from: they would not name the link.
func TestUpdateInPlaceNotFromTreeWithDroppedLink(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(map[string]string{
		"README.md":      "registry\n",
		"x/SKILL.md":     "->../src/x.md", // dangles in the first commit: dropped
		"other/SKILL.md": "---\nname: other\ndescription: d\n---\n",
	})
	repo.Commit("first")
	bare := repo.Bare()
	root := t.TempDir()
	fetchAndClose(t, root, bare)

	repo.Write(map[string]string{"src/x.md": "---\nname: x\ndescription: linked skill\n---\n"})
	repo.Commit("add the link's target")
	repo.Push(bare)

	ctx := context.Background()
	c, err := Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	s2, moved, changes, err := c.UpdateChanges(ctx, Check)
	if err != nil || !moved {
		t.Fatal(moved, err)
	}
	if changes != nil {
		t.Errorf("the update reports changes %v, though the tree holds a link", changes.Paths)
	}
	// The same commit materialized whole in a fresh cache.
	fresh := fetchAndClose(t, t.TempDir(), bare)
	if fresh.Commit != s2.Commit {
		t.Fatalf("commits differ: %s %s", fresh.Commit, s2.Commit)
	}
	if _, err := os.Stat(filepath.Join(fresh.Dir, "x", "SKILL.md")); err != nil {
		t.Fatalf("test setup: a fresh materialization lacks x/SKILL.md: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s2.Dir, "x", "SKILL.md")); err != nil {
		t.Errorf("commit %s: x/SKILL.md is in a fresh materialization but missing from the updated cache's directory: %v", s2.Commit[:12], err)
	}
}

// TestUpdateInPlaceRefusesCaseCollisions: an update that could happen in
// place checks the changed directories under package archive's rules as a
// full materialization does: names differing only in case (which a
// case-sensitive file system would take) refuse the commit, and the
// previous commit's directory stays as it was.
func TestUpdateInPlaceRefusesCaseCollisions(t *testing.T) {
	repo, bare := inPlaceRepo(t)
	root := t.TempDir()
	ctx := context.Background()
	s1 := fetchAndClose(t, root, bare)

	repo.Write(map[string]string{"e010/skill.md": "the same name in lower case\n"})
	repo.Commit("case")
	repo.Push(bare)
	c, err := Open(ctx, Config{Root: root, Name: "inplace", URL: bare, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _, err = c.Update(ctx, Check)
	var ce *ContentError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), `"e010/skill.md"`) || !strings.Contains(err.Error(), "differing only in case") {
		t.Fatalf("update: %v, want a ContentError naming e010/skill.md", err)
	}
	if _, err := os.Stat(filepath.Join(s1.Dir, "e010", "SKILL.md")); err != nil {
		t.Fatalf("the previous commit's directory was changed: %v", err)
	}
}
