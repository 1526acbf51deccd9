//go:build linux

package gitcache

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
)

// DiskFull fails writes as a full disk does: once the files a rule selects
// have received Budget bytes, every further write to them fails with
// ENOSPC. It is a Config.BeforeWrite hook.
type diskFull struct {
	mu     sync.Mutex
	match  func(path string) bool
	budget int
	used   int
	off    bool
}

func (d *diskFull) hook(path string, n int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.off || !d.match(path) {
		return nil
	}
	if d.used+n > d.budget {
		return &fs.PathError{Op: "write", Path: path, Err: syscall.ENOSPC}
	}
	d.used += n
	return nil
}

func (d *diskFull) disable() {
	d.mu.Lock()
	d.off = true
	d.mu.Unlock()
}

// childProcesses lists the commands of this process's live children
// (zombies excluded).
func childProcesses(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	me := os.Getpid()
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out = append(out, s[strings.IndexByte(s, '(')+1:i])
		}
	}
	return out
}

// TestDiskFull is issue 14 item 9: with the cache's file system full, an
// update must return a write error naming the file, leave no git process
// behind, and leave the cache usable once there is room again. Before the
// fix a full disk during the pack made Update wait forever on
// git-upload-pack, which waited forever for its output to be read.
func TestDiskFull(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	// Far more pack than a pipe holds, so git-upload-pack blocks when
	// nobody reads.
	repo.Write(map[string]string{"big/a.bin": randomText(7, 1<<20), "big/b.bin": randomText(8, 1<<20)})
	c1 := repo.Commit("first")
	bare := repo.Bare()
	srv := gittest.Serve(t, filepath.Dir(bare))

	under := func(part string) func(string) bool {
		return func(p string) bool { return strings.Contains(p, part) }
	}
	for _, fault := range []struct {
		name   string
		match  func(string) bool
		budget int
	}{
		{"pack", under("tmp_pack_"), 64 << 10},
		{"pack-at-once", under("tmp_pack_"), 0},
		{"shallow", func(p string) bool { return filepath.Base(p) == "shallow" }, 0},
		{"repository-config", func(p string) bool { return filepath.Base(p) == "config" }, 0},
		{"commit-directory", under(string(filepath.Separator) + "commits" + string(filepath.Separator)), 4 << 10},
		{"state", under("state.json"), 0},
	} {
		for _, url := range []struct{ name, url string }{
			{"path", bare},
			{"http", srv.URL + "/registry.git"},
		} {
			t.Run(fault.name+"/"+url.name, func(t *testing.T) {
				full := &diskFull{match: fault.match, budget: fault.budget}
				root := t.TempDir()
				c, err := Open(context.Background(), Config{Root: root, Name: "full", URL: url.url, Logger: testLogger(t), BeforeWrite: full.hook})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				type result struct {
					snap Snapshot
					err  error
				}
				done := make(chan result, 1)
				go func() {
					snap, _, err := c.Update(context.Background(), Fetch)
					done <- result{snap, err}
				}()
				var res result
				select {
				case res = <-done:
				case <-time.After(60 * time.Second):
					kids := childProcesses(t)
					t.Fatalf("Update did not return with the disk full (children: %v)", kids)
				}
				var we *WriteError
				if !errors.As(res.err, &we) {
					t.Fatalf("Update = %+v, %v; want a *WriteError", res.snap, res.err)
				}
				msg := res.err.Error()
				if !strings.Contains(msg, "no space left on device") || !strings.Contains(msg, c.Path()) {
					t.Fatalf("error %q does not give the cause and a path in the cache %s", msg, c.Path())
				}
				if kids := childProcesses(t); url.name == "path" && len(kids) > 0 {
					t.Fatalf("processes left behind after the failed update: %v", kids)
				}
				if _, err := c.Current(context.Background()); !errors.Is(err, ErrNotCached) {
					t.Fatalf("Current after a failed first update: %v, want ErrNotCached", err)
				}

				// Room again: the same cache updates and serves the commit.
				full.disable()
				snap, _, err := c.Update(context.Background(), Fetch)
				if err != nil || snap.Commit != c1 {
					t.Fatalf("Update with room again = %+v, %v; want commit %s", snap, err, c1)
				}
				checkTree(t, repo.Dir, c1, snap.Dir)
			})
		}
	}
}
