package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/archive/archivetest"
)

// zeros reads as an endless run of zero bytes.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// bombRepo makes a repository whose one commit holds files of size bytes
// of zeros each (one distinct last byte apiece), stored as whole zlib'd
// objects (no deltas), and returns its directory and the size of the pack
// a clone receives (about 1 KB a MiB).
func bombRepo(t *testing.T, files int, size int64) string {
	repo := gittest.NewRepo(t)
	repo.Git("config", "core.bigFileThreshold", "1k") // whole objects, no deltas between the near-identical blobs
	var tree strings.Builder
	for i := range files {
		cmd := exec.Command("git", "hash-object", "-w", "--stdin")
		cmd.Dir, cmd.Env = repo.Dir, gittest.Env()
		cmd.Stdin = io.MultiReader(io.LimitReader(zeros{}, size-1), strings.NewReader(string(rune('a'+i%26))))
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git hash-object: %v", err)
		}
		fmt.Fprintf(&tree, "100644 blob %s\tz%04d\n", strings.TrimSpace(string(out)), i)
	}
	cmd := exec.Command("git", "mktree")
	cmd.Dir, cmd.Env, cmd.Stdin = repo.Dir, gittest.Env(), strings.NewReader(tree.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git mktree: %v", err)
	}
	commit := repo.Git("commit-tree", strings.TrimSpace(string(out)), "-m", "bomb")
	repo.Git("update-ref", "refs/heads/main", commit)
	return repo.Dir
}

// TestBombWritesAtMostTheCap: a registry commit whose pack is small but
// expands past the caps makes the cache write at most the caps, counted by
// the process's written bytes: a file over the file cap (64 MiB) is refused
// before it is written; files under it adding up past the commit cap are
// written until the next would pass it. The commit is refused as content
// and nothing of it is left. The tree's bytes are counted by a
// Config.BeforeWrite hook; beyond them, the cache writes only what the
// pack's size accounts for. The second case lowers the
// caps (to 4 MiB a file, 16 MiB a commit), as writing 1 GiB would take
// minutes here; the check is the same code.
func TestBombWritesAtMostTheCap(t *testing.T) {
	tests := []struct {
		name        string
		files       int
		size        int64
		file, total int64 // lowered caps; 0: the defaults
		want        int64 // most tree bytes written
	}{
		{"one file over the file cap", 1, MaxFileSize + 1, 0, 0, 0},
		{"files past the commit cap", 5, 4 << 20, 4 << 20, 16 << 20, 16 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := bombRepo(t, tt.files, tt.size)
			var count writeCounter
			c, err := Open(context.Background(), Config{Root: t.TempDir(), Name: "bomb", URL: src, Logger: testLogger(t), BeforeWrite: count.hook})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.cfg.limits.file, c.cfg.limits.total = tt.file, tt.total
			written, merr := archivetest.Written(func() { _, _, err = c.Update(context.Background(), Check) })
			if errors.Is(merr, archivetest.ErrUnmeasured) {
				t.Skip(merr)
			}
			var ce *ContentError
			if !errors.As(err, &ce) {
				t.Fatalf("Update: %v, want a ContentError", err)
			}
			tree, repo := count.take()
			pack := dirSize(t, filepath.Join(c.Path(), "repo", "objects"))
			if tree > tt.want {
				t.Errorf("wrote %d bytes of the tree; the cap is %d", tree, tt.want)
			}
			// The pack is received, indexed and stored: its writes are a
			// few times its size, whatever it expands to.
			if limit := tt.want + 4*pack + 64<<10; written > limit {
				t.Errorf("wrote %d bytes in all; the cap is %d, plus the %d-byte pack (%d bytes written to the repository)", written, tt.want, pack, repo)
			}
			t.Logf("%d files of %d bytes in a %d-byte pack: %d bytes written in all, %d of the tree (cap %d): %v",
				tt.files, tt.size, pack, written, tree, tt.want, err)
			if ents, _ := os.ReadDir(filepath.Join(c.Path(), "commits")); len(ents) != 0 {
				t.Errorf("a refused commit left %v in the cache", ents)
			}
		})
	}
}

// dirSize adds up the sizes of the regular files below dir.
func dirSize(t *testing.T, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// TestPackCap: a remote that sends a pack over the cap on one fetch
// (lowered here to 64 KiB, from MaxPackSize) is refused with an error
// naming the cap, before more of the stream is written, and the cache is
// left as it was: the same registry is fetched once the cap allows it.
func TestPackCap(t *testing.T) {
	repo := gittest.NewRepo(t)
	files := map[string]string{}
	for i := range 4 {
		files[fmt.Sprintf("e%d/SKILL.md", i)] = "---\nname: e\ndescription: d\n---\n" + randomText(uint64(i), 64<<10)
	}
	repo.Write(files)
	commit := repo.Commit("big")
	var count writeCounter
	c, err := Open(context.Background(), Config{Root: t.TempDir(), Name: "pack", URL: repo.Dir, Logger: testLogger(t), BeforeWrite: count.hook})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.cfg.limits.pack = 64 << 10
	_, _, err = c.Update(context.Background(), Check)
	var re *RemoteError
	var big *PackTooLargeError
	if !errors.As(err, &re) || !errors.As(err, &big) || big.Max != 64<<10 || !strings.Contains(err.Error(), "65536 bytes") {
		t.Fatalf("Update over the pack cap: %v, want a RemoteError naming the 65536-byte cap", err)
	}
	t.Log(err)
	if _, repoBytes := count.take(); repoBytes > 64<<10+8<<10 {
		t.Errorf("wrote %d bytes into the repository, past the 65536-byte cap", repoBytes)
	}
	if _, err := c.Current(context.Background()); !errors.Is(err, ErrNotCached) {
		t.Fatalf("after a refused fetch: %v, want nothing cached", err)
	}
	if left := dirSize(t, filepath.Join(c.Path(), "repo", "objects")); left != 0 {
		t.Errorf("a refused pack left %d bytes in the repository", left)
	}
	c.cfg.limits.pack = 0
	snap, _, err := c.Update(context.Background(), Check)
	if err != nil || snap.Commit != commit {
		t.Fatalf("Update within the cap: %+v %v", snap, err)
	}
	checkTree(t, repo.Dir, commit, snap.Dir)
}
