//go:build unix

package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/filelock"
)

// inodeOf returns the inode of path, failing the test when it is missing.
func inodeOf(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return fi.Sys().(*syscall.Stat_t).Ino
}

// rootWatch records roots handed out (their inodes) and checks that each
// is still the very directory it was (a root is never removed, replaced or
// moved while its connection may use it), at any moment, as the
// BeforeWrite hook of another cache does during its writes.
type rootWatch struct {
	t     *testing.T
	roots map[string]uint64
	mu    sync.Mutex
	bad   []string
}

func watchRoots(t *testing.T, dir string, entries ...string) *rootWatch {
	w := &rootWatch{t: t, roots: map[string]uint64{}}
	for _, e := range entries {
		p := filepath.Join(dir, filepath.FromSlash(e))
		w.roots[p] = inodeOf(t, p)
	}
	return w
}

// check records every root that is no longer its directory; at is where.
func (w *rootWatch) check(at string) {
	for p, ino := range w.roots {
		fi, err := os.Stat(p)
		if err == nil && fi.Sys().(*syscall.Stat_t).Ino == ino {
			continue
		}
		w.mu.Lock()
		w.bad = append(w.bad, fmt.Sprintf("%s (at %s): %v", p, at, err))
		w.mu.Unlock()
	}
}

func (w *rootWatch) hook(path string, n int) error {
	w.check(filepath.Base(path))
	return nil
}

// report fails the test with the roots found gone or replaced.
func (w *rootWatch) report(when string) {
	w.t.Helper()
	w.check(when)
	if len(w.bad) > 0 {
		w.t.Fatalf("roots handed out were removed or replaced %s (%d times), first: %s", when, len(w.bad), w.bad[0])
	}
}

// TestRepairKeepsRootsInUse: a connection (cache a) holds roots of a
// commit's directory when another (cache b, which may be another process)
// finds that directory damaged and repairs it. The repaired copy is
// published under a name of its own and every later lookup finds it;
// the directory a's roots lie in is never removed, replaced or moved, not
// even for a moment during the repair, and stays until a collection alone
// with the cache removes it.
func TestRepairKeepsRootsInUse(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	root := t.TempDir()
	ctx := context.Background()
	cfg := Config{Root: root, Name: "repair", URL: repo.Dir, Logger: testLogger(t)}
	a, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	snap, _, err := a.Update(ctx, Check)
	if err != nil || snap.Commit != c1 {
		t.Fatalf("update: %+v %v", snap, err)
	}
	a.WriteSidecar(snap.Name(), "index", []byte("describes the damaged directory"))
	watch := watchRoots(t, snap.Dir, ".", "rust", "group/nested/deep")
	// Damage behind the cache's back: an entry deleted.
	if err := os.RemoveAll(filepath.Join(snap.Dir, "standalone")); err != nil {
		t.Fatal(err)
	}

	bcfg := cfg
	bcfg.BeforeWrite = watch.hook
	b, err := Open(ctx, bcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	seen, err := b.Current(ctx)
	if err != nil || seen.Dir != snap.Dir {
		t.Fatalf("b sees %+v %v, want %s", seen, err, snap.Dir)
	}
	fixed, err := b.Repair(ctx, seen)
	if err != nil {
		t.Fatalf("repair: %v", err)
	}
	watch.report("during the repair")
	if fixed.Commit != c1 || fixed.Dir == snap.Dir || fixed.Name() != c1+"-1" {
		t.Fatalf("repaired = %+v, want commit %s in a directory of its own (%s-1)", fixed, c1, c1)
	}
	checkTree(t, repo.Dir, c1, fixed.Dir)
	if _, err := os.Stat(b.SidecarPath(fixed.Name(), "index")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the repaired copy has the index of the damaged one: %v", err)
	}
	// Every lookup, in either process, finds the repaired copy.
	for _, c := range []*Cache{a, b} {
		cur, err := c.Current(ctx)
		if err != nil || cur.Dir != fixed.Dir {
			t.Fatalf("Current after the repair = %+v %v, want %s", cur, err, fixed.Dir)
		}
		byID, err := c.Commit(ctx, c1, false)
		if err != nil || byID.Dir != fixed.Dir {
			t.Fatalf("Commit after the repair = %+v %v, want %s", byID, err, fixed.Dir)
		}
	}
	// A second repair by a process that saw the damaged directory does
	// nothing: it was repaired already.
	writes := 0
	ccfg := cfg
	ccfg.BeforeWrite = func(string, int) error { writes++; return nil }
	c, err := Open(ctx, ccfg)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Repair(ctx, seen)
	c.Close()
	if err != nil || again.Dir != fixed.Dir || writes != 0 {
		t.Fatalf("second repair from the damaged snapshot = %+v %v (%d writes), want %s and no write", again, err, writes, fixed.Dir)
	}
	watch.report("after the repair")

	// Once no process has the cache open, a start collects the damaged
	// copy and its sidecars, and keeps the repaired one.
	a.Close()
	b.Close()
	d, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, err := os.Stat(snap.Dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the damaged copy was not collected: %v", err)
	}
	if _, err := os.Stat(d.SidecarPath(snap.Name(), "index")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the damaged copy's sidecar was not collected: %v", err)
	}
	cur, err := d.Current(ctx)
	if err != nil || cur.Dir != fixed.Dir {
		t.Fatalf("Current after collection = %+v %v, want %s", cur, err, fixed.Dir)
	}
	checkTree(t, repo.Dir, c1, cur.Dir)
	ents, _ := os.ReadDir(filepath.Join(d.Path(), "commits"))
	for _, e := range ents {
		if n := e.Name(); n != fixed.Name() && !strings.HasPrefix(n, fixed.Name()+".") {
			t.Errorf("commits/%s left after collection", n)
		}
	}
}

// TestRepairFailureKeepsDirectory: a repair that cannot materialize the
// commit (its repository is gone) fails and leaves the damaged directory
// where it is, the commit's directory still: the roots handed out of it
// that were not damaged stay valid for good.
func TestRepairFailureKeepsDirectory(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	repo.Commit("first")
	ctx := context.Background()
	cfg := Config{Root: t.TempDir(), Name: "repair", URL: repo.Dir, Logger: testLogger(t)}
	a, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	snap, _, err := a.Update(ctx, Check)
	if err != nil {
		t.Fatal(err)
	}
	watch := watchRoots(t, snap.Dir, ".", "rust", "group/nested/deep")
	os.RemoveAll(filepath.Join(snap.Dir, "standalone"))
	os.RemoveAll(filepath.Join(a.Path(), "repo", "objects"))

	bcfg := cfg
	bcfg.BeforeWrite = watch.hook
	b, err := Open(ctx, bcfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := b.Repair(ctx, snap); err == nil {
		t.Fatalf("repair without a repository = %+v, want an error", got)
	} else if !strings.Contains(err.Error(), snap.Commit) {
		t.Errorf("error %q does not name the commit", err)
	}
	watch.report("after a failed repair")
	if cur, err := b.Current(ctx); err != nil || cur.Dir != snap.Dir {
		t.Fatalf("Current after a failed repair = %+v %v, want %s", cur, err, snap.Dir)
	}
}

// TestDirNames: the names a commit's directories take, and no other.
func TestDirNames(t *testing.T) {
	id := strings.Repeat("ab", 20)
	for name, want := range map[string]int{
		id: 0, id + "-1": 1, id + "-12": 12, id + "-999999999": 999999999,
		id + "-0": -1, id + "-01": -1, id + "-": -1, id + "-1x": -1, id + "-1000000000": -1,
		id + ".index": -1, id[:39]: -1, strings.ToUpper(id): -1, tombPrefix + id: -1, ".tmp-" + id[:12] + "-x": -1,
	} {
		commit, gen, ok := splitDirName(name)
		if ok != (want >= 0) || ok && (commit != id || gen != want) || IsDirName(name) != ok {
			t.Errorf("splitDirName(%q) = %q, %d, %v; want gen %d", name, commit, gen, ok, want)
		}
		if ok && dirName(commit, gen) != name {
			t.Errorf("dirName(%q, %d) = %q", commit, gen, dirName(commit, gen))
		}
	}
	// A list of what a directory shares may name a repaired copy.
	s := Share{"a": id + "-2", "b": id}
	got, err := parseShare(encodeShare(s))
	if err != nil || len(got) != 2 || got["a"] != id+"-2" || got["b"] != id {
		t.Fatalf("parseShare(encodeShare(%v)) = %v, %v", s, got, err)
	}
	if _, err := parseShare([]byte("homes " + id + "-0\n" + id + "-0 a\n")); err == nil {
		t.Fatal("parseShare took a name no directory has")
	}
}

// killTemplate builds, once per test, a cache in root for repo: the cache
// is copied for each process the test kills.
type killTemplate struct {
	root, url string
	cfg       Config
}

// copyCache copies the template's cache root to a new directory.
func (k *killTemplate) copyCache(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "root")
	if err := os.CopyFS(dst, os.DirFS(k.root)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// runKilled runs the helper process in mode on root, killing itself
// (SIGKILL) at its step kill; it reports false when the process ended
// before reaching that step.
func runKilled(t *testing.T, mode, root, url string, kill int) bool {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillStepHelperProcess$")
	cmd.Env = append(os.Environ(), "GITCACHE_STEP_HELPER="+mode, "GITCACHE_ROOT="+root, "GITCACHE_URL="+url, "GITCACHE_KILL_AT="+strconv.Itoa(kill))
	out, err := cmd.CombinedOutput()
	if err == nil {
		if !strings.Contains(string(out), "steps=") {
			t.Fatalf("helper %s did not run:\n%s", mode, out)
		}
		return false
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("helper %s at step %d: %v\n%s", mode, kill, err, out)
	}
	return true
}

// TestKillStepHelperProcess is the process the kill tests kill: it opens
// the cache (collecting, alone with it) and, in mode repair, repairs the
// current commit, killing itself at the step GITCACHE_KILL_AT (a removal
// of a collection, a write of a repair).
func TestKillStepHelperProcess(t *testing.T) {
	mode := os.Getenv("GITCACHE_STEP_HELPER")
	if mode == "" {
		t.Skip("helper process")
	}
	killAt, _ := strconv.Atoi(os.Getenv("GITCACHE_KILL_AT"))
	steps := 0
	step := func() {
		steps++
		if steps == killAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {}
		}
	}
	cfg := Config{Root: os.Getenv("GITCACHE_ROOT"), Name: "kill", URL: os.Getenv("GITCACHE_URL")}
	switch mode {
	case "collect":
		cfg.beforeRemove = func(string) { step() }
	case "repair":
		cfg.BeforeWrite = func(string, int) error { step(); return nil }
	}
	ctx := context.Background()
	c, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if mode == "repair" {
		snap, err := c.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Repair(ctx, snap); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Printf("steps=%d\n", steps)
}

// holdCache takes the cache's life lock shared, as a process using the
// cache holds it: a cache opened meanwhile collects nothing.
func holdCache(t *testing.T, cacheDir string) *filelock.File {
	t.Helper()
	l, err := filelock.Open(filepath.Join(cacheDir, "lock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Lock(context.Background(), filelock.Shared); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCollectKilledAtEveryStep kills a process collecting an old commit's
// directory at every step of the removal (each rename, each sidecar, each
// file and directory of its tree), and checks that what it leaves is never
// taken for that commit's directory: the commit's name holds the whole
// tree or nothing, so the old commit asked for again (by id, or because
// the ref moved back to it) is materialized whole, never served
// half-deleted, and never beside a sidecar of the directory removed. The
// next collection finishes the removal; the current commit is never
// touched.
func TestCollectKilledAtEveryStep(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	old := repo.Commit("first")
	ctx := context.Background()
	k := &killTemplate{root: t.TempDir(), url: repo.Dir}
	k.cfg = Config{Root: k.root, Name: "kill", URL: repo.Dir, Logger: testLogger(t)}
	c, err := Open(ctx, k.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s1, _, err := c.Update(ctx, Check)
	if err != nil {
		t.Fatal(err)
	}
	c.WriteSidecar(s1.Name(), "index", []byte("describes the old directory"))
	repo.Write(map[string]string{"rust/SYMPOSIUM.toml": "name = \"rust2\"\n"})
	cur := repo.Commit("second")
	s2, _, err := c.Update(ctx, Check) // beside the first: its roots were handed out
	if err != nil || s2.Commit != cur {
		t.Fatalf("second update: %+v %v", s2, err)
	}
	c.Close()
	if _, err := os.Stat(s1.Dir); err != nil {
		t.Fatalf("test setup: the old commit's directory: %v", err)
	}
	rel, _ := filepath.Rel(k.root, Dir(k.cfg))

	for kill := 1; ; kill++ {
		if kill > 200 {
			t.Fatal("the collection never ended")
		}
		root := k.copyCache(t)
		if !runKilled(t, "collect", root, repo.Dir, kill) {
			t.Logf("the collection took %d steps", kill-1)
			if kill < 10 {
				t.Fatalf("only %d steps: the helper did not collect", kill-1)
			}
			break
		}
		dir := filepath.Join(root, rel)
		commits := filepath.Join(dir, "commits")
		// The old commit's name holds its whole tree, or nothing.
		_, err := os.Stat(filepath.Join(commits, old))
		oldThere := err == nil
		if oldThere {
			t.Run(fmt.Sprintf("step%02d/left", kill), func(t *testing.T) { checkTree(t, repo.Dir, old, filepath.Join(commits, old)) })
		} else if !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		checkTree(t, repo.Dir, cur, filepath.Join(commits, cur))

		// A process that does not collect (another holds the cache) gets
		// the old commit's whole tree when the ref moves back to it, and
		// when asked for it by id.
		cfg := k.cfg
		cfg.Root, cfg.Logger = root, nil
		hold := holdCache(t, dir)
		c, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		repo.Git("update-ref", "refs/heads/main", old)
		back, _, err := c.Update(ctx, Check)
		repo.Git("update-ref", "refs/heads/main", cur)
		if err != nil || back.Commit != old {
			t.Fatalf("killed at step %d: the update back to the old commit = %+v, %v", kill, back, err)
		}
		t.Run(fmt.Sprintf("step%02d/served", kill), func(t *testing.T) { checkTree(t, repo.Dir, old, back.Dir) })
		if b, err := os.ReadFile(c.SidecarPath(back.Name(), "index")); err == nil && string(b) == "describes the old directory" && !oldThere {
			t.Errorf("killed at step %d: a new directory of the old commit has the removed one's sidecar", kill)
		}
		if byID, err := c.Commit(ctx, old, false); err != nil || byID.Dir != back.Dir {
			t.Fatalf("killed at step %d: Commit(old) = %+v, %v; want %s", kill, byID, err, back.Dir)
		}
		if fwd, _, err := c.Update(ctx, Check); err != nil || fwd.Commit != cur {
			t.Fatalf("killed at step %d: the update forward again = %+v, %v", kill, fwd, err)
		}
		c.Close()
		hold.Close()

		// The next start alone with the cache finishes: the current
		// commit's directory and sidecars only.
		c, err = Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		ents, _ := os.ReadDir(commits)
		for _, e := range ents {
			if n := e.Name(); n != cur && !strings.HasPrefix(n, cur+".") {
				t.Errorf("killed at step %d: commits/%s left after the next collection", kill, n)
			}
		}
		checkTree(t, repo.Dir, cur, filepath.Join(commits, cur))
		if t.Failed() {
			t.FailNow()
		}
	}
}

// TestRepairKilledAtEveryStep kills a process repairing a damaged commit
// directory at every write of the repair (each file of the new copy, its
// sidecar once published) and checks that the damaged directory, whose
// roots other connections may hold, is still where it was, the same
// directory, and that the commit's directory is always either it or a
// whole repaired copy, which a later repair or lookup then serves.
func TestRepairKilledAtEveryStep(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	commit := repo.Commit("first")
	ctx := context.Background()
	k := &killTemplate{root: t.TempDir(), url: repo.Dir}
	k.cfg = Config{Root: k.root, Name: "kill", URL: repo.Dir, Logger: testLogger(t)}
	c, err := Open(ctx, k.cfg)
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := c.Update(ctx, Check)
	c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(snap.Dir, "standalone")); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(k.root, snap.Dir)

	for kill := 1; ; kill++ {
		if kill > 200 {
			t.Fatal("the repair never ended")
		}
		root := k.copyCache(t)
		damaged := filepath.Join(root, rel)
		watch := watchRoots(t, damaged, ".", "rust", "group/nested/deep")
		killed := runKilled(t, "repair", root, repo.Dir, kill)
		watch.report(fmt.Sprintf("by a repair killed at step %d", kill))
		if !killed && kill < 5 {
			t.Fatalf("only %d steps: the helper did not repair", kill-1)
		}
		cfg := k.cfg
		cfg.Root, cfg.Logger = root, nil
		hold := holdCache(t, filepath.Dir(filepath.Dir(damaged)))
		c, err := Open(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		cur, err := c.Current(ctx)
		if err != nil {
			t.Fatalf("killed at step %d: Current: %v", kill, err)
		}
		if cur.Dir != damaged {
			checkTree(t, repo.Dir, commit, cur.Dir)
		}
		fixed, err := c.Repair(ctx, Snapshot{Commit: commit, Dir: damaged})
		if err != nil {
			t.Fatalf("killed at step %d: repair again: %v", kill, err)
		}
		checkTree(t, repo.Dir, commit, fixed.Dir)
		watch.report(fmt.Sprintf("after a repair killed at step %d and another", kill))
		c.Close()
		hold.Close()
		if !killed {
			t.Logf("the repair took %d steps", kill-1)
			break
		}
	}
}
