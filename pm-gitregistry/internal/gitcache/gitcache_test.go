package gitcache

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/filelock"
)

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func open(t *testing.T, root, url, ref, subdir string) *Cache {
	t.Helper()
	c, err := Open(context.Background(), Config{Root: root, Name: "test", URL: url, Ref: ref, Subdir: subdir, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// files lists the regular files and links below dir as slash paths.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// lsTree is the oracle: git's own list of the files of a commit.
func lsTree(t *testing.T, repo, commit, subdir string) []string {
	t.Helper()
	args := []string{"ls-tree", "-r", "--name-only", commit}
	if subdir != "" {
		args = append(args, "--", subdir+"/")
	}
	out := gittest.Run(t, repo, args...)
	var names []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" {
			names = append(names, strings.TrimPrefix(l, subdir+"/"))
		}
	}
	sort.Strings(names)
	return names
}

var sample = map[string]string{
	"README.md":                    "registry\n",
	"rust/SYMPOSIUM.toml":          "name = \"rust\"\n",
	"rust/skills/a/SKILL.md":       "---\nname: a\ndescription: A\n---\n",
	"standalone/tidy/SKILL.md":     "---\nname: tidy\ndescription: Tidy things\n---\n",
	"group/nested/deep/SKILL.md":   "---\nname: deep\ndescription: Deep\n---\n",
	"group/nested/deep/script.sh":  "#!/bin/sh\necho hi\n",
	"group/nested/deep/data/x.txt": "x",
}

// TestUpdateRemoteWithDetachedHEAD: a remote whose HEAD is detached at a
// commit no branch or tag points at (a local work tree checked out at an
// older commit, or a served repository so left) is read as git reads it:
// --ref main follows the branch, and the default ref is HEAD's commit.
// go-git failed both with "reference not found" (it guesses HEAD's branch
// among the refs at its commit); see detachedhead.go.
func TestUpdateRemoteWithDetachedHEAD(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	repo.Write(map[string]string{"x/SKILL.md": "---\nname: x\ndescription: X\n---\n"})
	c2 := repo.Commit("second")
	bare := repo.Bare()
	repo.Git("checkout", "-q", "--detach", c1)
	gittest.Run(t, bare, "update-ref", "--no-deref", "HEAD", c1)
	if got := gittest.Run(t, repo.Dir, "ls-remote", repo.Dir, "refs/heads/main"); !strings.HasPrefix(got, c2) {
		t.Fatalf("git ls-remote: %q", got)
	}
	srv := gittest.Serve(t, filepath.Dir(bare))
	for _, url := range []string{repo.Dir, srv.URL + "/" + filepath.Base(bare)} {
		for ref, want := range map[string]string{"main": c2, "refs/heads/main": c2, "": c1, "HEAD": c1} {
			c := open(t, t.TempDir(), url, ref, "")
			for _, mode := range []Mode{Check, Fetch} {
				snap, _, err := c.Update(context.Background(), mode)
				if err != nil || snap.Commit != want {
					t.Errorf("%s ref %q mode %v: Update = %q, %v; want %s", url, ref, mode, snap.Commit, err, want)
				}
			}
		}
	}
	// HEAD detached where a branch points too keeps go-git's reading.
	repo.Git("checkout", "-q", "--detach", c2)
	c := open(t, t.TempDir(), repo.Dir, "", "")
	if snap, _, err := c.Update(context.Background(), Check); err != nil || snap.Commit != c2 {
		t.Errorf("HEAD detached at main's commit: Update = %q, %v; want %s", snap.Commit, err, c2)
	}
}

func TestUpdateLocalAndHTTP(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	os.Chmod(filepath.Join(repo.Dir, "group/nested/deep/script.sh"), 0o755)
	c1 := repo.Commit("first")
	bare := repo.Bare()
	srv := gittest.Serve(t, filepath.Dir(bare))

	for _, tc := range []struct{ name, url string }{
		{"path", bare},
		{"file-url", "file://" + bare},
		{"smart-http", srv.URL + "/registry.git"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, t.TempDir(), tc.url, "", "")
			if _, err := c.Current(context.Background()); !errors.Is(err, ErrNotCached) {
				t.Fatalf("Current before any update: %v, want ErrNotCached", err)
			}
			snap, changed, err := c.Update(context.Background(), Check)
			if err != nil {
				t.Fatal(err)
			}
			if !changed || snap.Commit != c1 {
				t.Fatalf("Update = %+v changed=%v, want commit %s changed", snap, changed, c1)
			}
			got, want := files(t, snap.Dir), lsTree(t, repo.Dir, c1, "")
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("materialized files\n got %v\nwant %v", got, want)
			}
			b, err := os.ReadFile(filepath.Join(snap.Dir, "rust/SYMPOSIUM.toml"))
			if err != nil || string(b) != sample["rust/SYMPOSIUM.toml"] {
				t.Fatalf("content: %q, %v", b, err)
			}
			fi, err := os.Stat(filepath.Join(snap.Dir, "group/nested/deep/script.sh"))
			if err != nil || fi.Mode().Perm()&0o100 == 0 {
				t.Fatalf("executable bit lost: %v %v", fi.Mode(), err)
			}
			cur, err := c.Current(context.Background())
			if err != nil || cur != snap {
				t.Fatalf("Current = %+v, %v; want %+v", cur, err, snap)
			}
		})
	}
	if srv.Requests.Load() == 0 {
		t.Fatal("the HTTP server saw no request")
	}
}

func TestCheckFetchesOnlyWhenMoved(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	bare := repo.Bare()
	srv := gittest.Serve(t, filepath.Dir(bare))
	c := open(t, t.TempDir(), srv.URL+"/registry.git", "main", "")
	ctx := context.Background()

	snap1, _, err := c.Update(ctx, Check)
	if err != nil {
		t.Fatal(err)
	}
	before := srv.Requests.Load()
	snap, changed, err := c.Update(ctx, Check)
	if err != nil || changed || snap != snap1 {
		t.Fatalf("second check: %+v changed=%v err=%v", snap, changed, err)
	}
	if n := srv.Requests.Load() - before; n != 1 {
		t.Fatalf("an unchanged check made %d requests, want 1 (ls-remote only)", n)
	}

	repo.Write(map[string]string{"new/SKILL.md": "---\nname: new\ndescription: New\n---\n"})
	c2 := repo.Commit("second")
	repo.Push(bare)
	snap2, changed, err := c.Update(ctx, Check)
	if err != nil || !changed || snap2.Commit != c2 {
		t.Fatalf("check after push: %+v changed=%v err=%v, want %s", snap2, changed, err, c2)
	}
	// The old root is still there for whoever holds it.
	if _, err := os.Stat(filepath.Join(snap1.Dir, "rust/SYMPOSIUM.toml")); err != nil {
		t.Fatalf("old root disappeared: %v", err)
	}
	if _, err := os.Stat(filepath.Join(snap1.Dir, "new")); !os.IsNotExist(err) {
		t.Fatalf("old root changed: %v", err)
	}
	// Fetch always fetches, even when nothing moved.
	before = srv.Requests.Load()
	snap, changed, err = c.Update(ctx, Fetch)
	if err != nil || changed || snap.Commit != c2 {
		t.Fatalf("fetch: %+v changed=%v err=%v", snap, changed, err)
	}
	if n := srv.Requests.Load() - before; n < 2 {
		t.Fatalf("fetch made %d requests, want ls-remote and upload-pack", n)
	}
	_ = c1
}

func TestRefs(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(map[string]string{"a/SKILL.md": "v1"})
	c1 := repo.Commit("v1")
	repo.Git("tag", "-a", "-m", "release", "v1.0")
	repo.Git("tag", "light", c1)
	repo.Write(map[string]string{"a/SKILL.md": "v2"})
	c2 := repo.Commit("v2")
	repo.Git("checkout", "-q", "-b", "other")
	repo.Write(map[string]string{"a/SKILL.md": "other"})
	c3 := repo.Commit("other")
	repo.Git("checkout", "-q", "main")
	bare := repo.Bare()
	repo.Push(bare)

	for _, tc := range []struct {
		ref, want string
	}{
		{"", c2}, {"main", c2}, {"refs/heads/main", c2}, {"other", c3},
		{"v1.0", c1}, {"light", c1}, {"refs/tags/v1.0", c1}, {c1, c1}, {c3, c3},
	} {
		t.Run("ref="+tc.ref, func(t *testing.T) {
			c := open(t, t.TempDir(), bare, tc.ref, "")
			snap, _, err := c.Update(context.Background(), Check)
			if err != nil {
				t.Fatal(err)
			}
			if snap.Commit != tc.want {
				t.Fatalf("ref %q resolved to %s, want %s", tc.ref, snap.Commit, tc.want)
			}
		})
	}
	t.Run("missing", func(t *testing.T) {
		c := open(t, t.TempDir(), bare, "nope", "")
		_, _, err := c.Update(context.Background(), Check)
		var rnf *RefNotFoundError
		if !errors.As(err, &rnf) {
			t.Fatalf("err = %v, want RefNotFoundError", err)
		}
		if !strings.Contains(err.Error(), `"nope"`) {
			t.Fatalf("message does not name the ref: %v", err)
		}
	})
	t.Run("missing-commit", func(t *testing.T) {
		c := open(t, t.TempDir(), bare, strings.Repeat("ab", 20), "")
		_, _, err := c.Update(context.Background(), Check)
		if !errors.Is(err, ErrCommitNotFound) {
			t.Fatalf("err = %v, want ErrCommitNotFound", err)
		}
	})
	t.Run("commit-by-id", func(t *testing.T) {
		c := open(t, t.TempDir(), bare, "", "")
		if _, err := c.Commit(context.Background(), c3, false); !errors.Is(err, ErrNotCached) {
			t.Fatalf("offline Commit: %v, want ErrNotCached", err)
		}
		snap, err := c.Commit(context.Background(), c3, true)
		if err != nil || snap.Commit != c3 {
			t.Fatalf("Commit: %+v %v", snap, err)
		}
		b, _ := os.ReadFile(filepath.Join(snap.Dir, "a/SKILL.md"))
		if string(b) != "other" {
			t.Fatalf("content %q", b)
		}
	})
}

func TestUnreachable(t *testing.T) {
	gittest.NeedGit(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/gone.git"
	srv.Close()
	for _, u := range []string{url, filepath.Join(t.TempDir(), "missing.git")} {
		c := open(t, t.TempDir(), u, "", "")
		_, _, err := c.Update(context.Background(), Check)
		var re *RemoteError
		if !errors.As(err, &re) {
			t.Fatalf("%s: err = %v, want RemoteError", u, err)
		}
	}
}

func TestCredentialsNeverShown(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	repo.Commit("first")
	bare := repo.Bare()
	guard := gittest.ServeAuth(t, filepath.Dir(bare), "alice", "s3cret-token")
	host := strings.TrimPrefix(guard.URL, "http://")

	good := open(t, t.TempDir(), "http://alice:s3cret-token@"+host+"/registry.git", "", "")
	if good.URL() != guard.URL+"/registry.git" {
		t.Fatalf("URL() = %q still carries credentials", good.URL())
	}
	if _, _, err := good.Update(context.Background(), Fetch); err != nil {
		t.Fatalf("with credentials: %v", err)
	}
	st, _ := os.ReadFile(filepath.Join(good.Path(), "state.json"))
	if strings.Contains(string(st), "s3cret") {
		t.Fatalf("state.json holds the password: %s", st)
	}

	// No credentials in the URL: git's credential helper supplies them.
	helper, err := Open(context.Background(), Config{
		Root: t.TempDir(), Name: "helper", URL: guard.URL + "/registry.git", Logger: testLogger(t),
		Environ: append(gittest.Env(), "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=credential.helper",
			"GIT_CONFIG_VALUE_0=!f() { echo username=alice; echo password=s3cret-token; }; f"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer helper.Close()
	if _, _, err := helper.Update(context.Background(), Check); err != nil {
		t.Fatalf("with a credential helper: %v", err)
	}

	bad := open(t, t.TempDir(), "http://alice:wrong-s3cret@"+host+"/registry.git", "", "")
	_, _, err = bad.Update(context.Background(), Check)
	if err == nil || strings.Contains(err.Error(), "wrong-s3cret") {
		t.Fatalf("err = %v: want an error without the password", err)
	}
	var re *RemoteError
	if !errors.As(err, &re) || re.Status() != http.StatusUnauthorized {
		t.Fatalf("err = %v: want a RemoteError with status 401", err)
	}
}

func TestSubdir(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	c := open(t, t.TempDir(), repo.Dir, "", "group/nested")
	snap, _, err := c.Update(context.Background(), Check)
	if err != nil {
		t.Fatal(err)
	}
	got, want := files(t, snap.Dir), lsTree(t, repo.Dir, c1, "group/nested")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v want %v", got, want)
	}
	c = open(t, t.TempDir(), repo.Dir, "", "nope")
	_, _, err = c.Update(context.Background(), Check)
	var ce *ContentError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("missing subdir: %v", err)
	}
	for _, bad := range []string{"../x", "a/../../b", "a/./b"} {
		if _, err := Open(context.Background(), Config{Root: t.TempDir(), URL: repo.Dir, Subdir: bad}); err == nil {
			t.Errorf("subdir %q accepted", bad)
		}
	}
}

func TestSymlinks(t *testing.T) {
	repo := gittest.NewRepo(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("secret"), 0o644)
	repo.Write(map[string]string{
		"p/SKILL.md":       "---\nname: p\ndescription: P\n---\n",
		"p/shared.md":      "->../common/doc.md",
		"common/doc.md":    "shared",
		"p/escape.md":      "->../../../../../../../../etc/passwd",
		"p/abs.md":         "->" + outside,
		"p/dirlink":        "->../common",
		"p/dangling.md":    "->nothing-here",
		"p/chain.md":       "->shared.md",
		"p/loop1":          "->loop2",
		"p/loop2":          "->loop1",
		"p/via-dir-escape": "->dirlink/../../..",
	})
	repo.Commit("links")
	c := open(t, t.TempDir(), repo.Dir, "", "")
	snap, _, err := c.Update(context.Background(), Check)
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []string{"p/shared.md", "p/chain.md"} {
		b, err := os.ReadFile(filepath.Join(snap.Dir, keep))
		if err != nil || string(b) != "shared" {
			t.Errorf("%s: %q %v", keep, b, err)
		}
	}
	for _, gone := range []string{"p/escape.md", "p/abs.md", "p/dirlink", "p/dangling.md", "p/loop1", "p/loop2", "p/via-dir-escape"} {
		if _, err := os.Lstat(filepath.Join(snap.Dir, gone)); !os.IsNotExist(err) {
			t.Errorf("%s was kept (%v)", gone, err)
		}
	}
}

func TestRepairAndOffline(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	root := t.TempDir()
	ctx := context.Background()
	c := open(t, root, repo.Dir, "", "")
	snap, _, err := c.Update(ctx, Check)
	if err != nil {
		t.Fatal(err)
	}

	// A deleted commit directory is rebuilt from the repository, offline.
	os.RemoveAll(snap.Dir)
	cur, err := c.Current(ctx)
	if err != nil || cur.Commit != c1 {
		t.Fatalf("Current after deleting the commit dir: %+v %v", cur, err)
	}
	if _, err := os.Stat(filepath.Join(cur.Dir, "rust/SYMPOSIUM.toml")); err != nil {
		t.Fatal(err)
	}

	// A half-deleted repository and commit dir: offline reports not cached,
	// an update clones afresh.
	os.RemoveAll(filepath.Join(c.Path(), "repo", "objects"))
	os.RemoveAll(snap.Dir)
	if _, err := c.Current(ctx); !errors.Is(err, ErrNotCached) {
		t.Fatalf("Current with a damaged repo: %v, want ErrNotCached", err)
	}
	snap, _, err = c.Update(ctx, Check)
	if err != nil || snap.Commit != c1 {
		t.Fatalf("Update did not repair: %+v %v", snap, err)
	}

	// Garbage in the repository's HEAD and state.json.
	os.WriteFile(filepath.Join(c.Path(), "repo", "HEAD"), []byte("garbage"), 0o644)
	os.WriteFile(filepath.Join(c.Path(), "state.json"), []byte("{not json"), 0o644)
	if _, err := c.Current(ctx); !errors.Is(err, ErrNotCached) {
		t.Fatalf("Current with garbage state: %v", err)
	}
	os.RemoveAll(snap.Dir)
	snap, changed, err := c.Update(ctx, Fetch)
	if err != nil || snap.Commit != c1 || !changed {
		t.Fatalf("Update did not repair a garbage repo: %+v %v %v", snap, changed, err)
	}

	// The whole cache deleted under a live Cache.
	os.RemoveAll(root)
	if _, err := c.Current(ctx); !errors.Is(err, ErrNotCached) {
		t.Fatalf("Current after deleting the cache: %v", err)
	}
	if _, _, err := c.Update(ctx, Check); err != nil {
		t.Fatalf("Update after deleting the cache: %v", err)
	}
}

// TestCollect: a start alone with the cache removes the commit directories
// and sidecars other than the current commit's; a start while another
// process has the cache open, or holds the update lock, removes nothing.
func TestCollect(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	repo.Commit("first")
	root := t.TempDir()
	ctx := context.Background()
	cfg := Config{Root: root, Name: "gc", URL: repo.Dir, Logger: testLogger(t)}

	a, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	old, _, err := a.Update(ctx, Check)
	if err != nil {
		t.Fatal(err)
	}
	a.WriteSidecar(old.Commit, "index.json", []byte("{}"))
	repo.Write(map[string]string{"b/SKILL.md": "x"})
	repo.Commit("second")
	cur, _, err := a.Update(ctx, Check)
	if err != nil {
		t.Fatal(err)
	}
	// Another user opens while a is alive: nothing is collected.
	b, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if _, err := os.Stat(old.Dir); err != nil {
		t.Fatalf("old commit collected while in use: %v", err)
	}
	a.Close()
	// A start alone with the cache while the update lock is held (a
	// process updating in place has dropped its life lock for a moment,
	// changing its mode) collects nothing either.
	upd, err := filelock.Open(filepath.Join(a.Path(), "update.lock"))
	if err != nil {
		t.Fatal(err)
	}
	if err := upd.Lock(ctx, filelock.Exclusive); err != nil {
		t.Fatal(err)
	}
	b, err = Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	upd.Close()
	if _, err := os.Stat(old.Dir); err != nil {
		t.Fatalf("old commit collected while a process held the update lock: %v", err)
	}
	// A later start with no other user collects the old commit and its sidecar.
	os.MkdirAll(filepath.Join(root, filepath.Base(a.Path()), "commits", ".tmp-abandoned"), 0o755)
	c, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := os.Stat(old.Dir); !os.IsNotExist(err) {
		t.Fatalf("old commit not collected: %v", err)
	}
	if _, err := os.Stat(a.SidecarPath(old.Commit, "index.json")); !os.IsNotExist(err) {
		t.Fatalf("old sidecar not collected: %v", err)
	}
	ents, _ := os.ReadDir(filepath.Join(a.Path(), "commits"))
	for _, e := range ents {
		if n := e.Name(); n != cur.Commit && !strings.HasPrefix(n, cur.Commit+".") {
			t.Fatalf("commits after collection: %v", ents)
		}
	}
	if len(ents) == 0 {
		t.Fatal("the current commit was collected")
	}
}

// TestTwoProcesses runs two processes updating one cache at once; both must
// succeed and agree.
func TestTwoProcesses(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(sample)
	c1 := repo.Commit("first")
	bare := repo.Bare()
	srv := gittest.Serve(t, filepath.Dir(bare))
	root := t.TempDir()
	var cmds []*exec.Cmd
	var outs []*strings.Builder
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
		cmd.Env = append(os.Environ(), "GITCACHE_HELPER=1", "GITCACHE_ROOT="+root, "GITCACHE_URL="+srv.URL+"/registry.git")
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		outs = append(outs, out)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v\n%s", i, err, outs[i])
		}
		if !strings.Contains(outs[i].String(), "commit="+c1) {
			t.Fatalf("process %d output:\n%s", i, outs[i])
		}
	}
}

func TestHelperProcess(t *testing.T) {
	if os.Getenv("GITCACHE_HELPER") != "1" {
		t.Skip("helper process")
	}
	ctx := context.Background()
	c, err := Open(ctx, Config{Root: os.Getenv("GITCACHE_ROOT"), Name: "shared", URL: os.Getenv("GITCACHE_URL")})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, m := range []Mode{Fetch, Check, Fetch} {
		snap, _, err := c.Update(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(snap.Dir, "rust/SYMPOSIUM.toml")); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := c.Current(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("commit=" + snap.Commit)
}

// TestShallow checks that updates fetch one commit deep, move on
// incrementally without re-cloning, and that an older commit is still
// found by id.
func TestShallow(t *testing.T) {
	repo := gittest.NewRepo(t)
	var commits []string
	for i := range 5 {
		repo.Write(map[string]string{"a/SKILL.md": fmt.Sprintf("v%d", i)})
		commits = append(commits, repo.Commit(fmt.Sprintf("v%d", i)))
	}
	bare := repo.Bare()
	srv := gittest.Serve(t, filepath.Dir(bare))
	logs := &strings.Builder{}
	c, err := Open(context.Background(), Config{Root: t.TempDir(), Name: "shallow", URL: srv.URL + "/registry.git",
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, _, err := c.Update(ctx, Check); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		out := gittest.Run(t, filepath.Join(c.Path(), "repo"), "rev-list", "--all")
		return len(strings.Fields(out))
	}
	if n := count(); n != 1 {
		t.Fatalf("the first update brought %d commits, want 1", n)
	}
	repo.Write(map[string]string{"a/SKILL.md": "v5"})
	c5 := repo.Commit("v5")
	repo.Push(bare)
	snap, changed, err := c.Update(ctx, Check)
	if err != nil || !changed || snap.Commit != c5 {
		t.Fatalf("update: %+v %v %v", snap, changed, err)
	}
	if strings.Contains(logs.String(), "afresh") {
		t.Fatalf("an incremental update re-cloned:\n%s", logs)
	}
	snap, err = c.Commit(ctx, commits[1], true)
	if err != nil || snap.Commit != commits[1] {
		t.Fatalf("old commit by id: %+v %v", snap, err)
	}
	b, _ := os.ReadFile(filepath.Join(snap.Dir, "a/SKILL.md"))
	if string(b) != "v1" {
		t.Fatalf("old commit content %q", b)
	}
	// git itself finds the repository consistent.
	gittest.Run(t, filepath.Join(c.Path(), "repo"), "fsck", "--no-progress")
}

// TestHostileTrees serves trees that git's porcelain would never write
// (built with git mktree): a ".." entry and a backslash in a name refuse the
// commit; a ".git" entry is skipped.
func TestHostileTrees(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries string // mktree lines for the inner directory; %s is a blob
		refuse  bool
	}{
		{"dotdot", "100644 blob %s\t..\n", true},
		{"backslash", "100644 blob %s\ta\\\\b\n", true},
		{"dotgit", "100644 blob %s\t.git\n100644 blob %s\tSKILL.md\n", false},
		{"dotgit-upper", "040000 tree %[2]s\t.GIT\n100644 blob %[1]s\tSKILL.md\n", false},
		{"case-files", "100644 blob %[1]s\tSKILL.md\n100644 blob %[1]s\tskill.md\n", true},
		{"case-dirs", "040000 tree %[2]s\tDocs\n040000 tree %[2]s\tdocs\n100644 blob %[1]s\tSKILL.md\n", true},
		{"case-file-dir", "100644 blob %[1]s\tNotes\n040000 tree %[2]s\tnotes\n100644 blob %[1]s\tSKILL.md\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			repo := gittest.NewRepo(t)
			mk := func(stdin string) string {
				cmd := exec.Command("git", "mktree")
				cmd.Dir, cmd.Env, cmd.Stdin = repo.Dir, gittest.Env(), strings.NewReader(stdin)
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("git mktree: %v", err)
				}
				return strings.TrimSpace(string(out))
			}
			blob := strings.TrimSpace(func() string {
				cmd := exec.Command("git", "hash-object", "-w", "--stdin")
				cmd.Dir, cmd.Env, cmd.Stdin = repo.Dir, gittest.Env(), strings.NewReader("---\nname: x\ndescription: x\n---\n")
				out, _ := cmd.Output()
				return string(out)
			}())
			empty := mk("100644 blob " + blob + "\tfile\n")
			inner := mk(fmt.Sprintf(strings.ReplaceAll(tc.entries, "%s", "%[1]s"), blob, empty))
			top := mk("040000 tree " + inner + "\tentry\n")
			commit := repo.Git("commit-tree", top, "-m", "hostile")
			repo.Git("update-ref", "refs/heads/main", commit)

			c := open(t, t.TempDir(), repo.Dir, "", "")
			snap, _, err := c.Update(context.Background(), Check)
			var ce *ContentError
			if tc.refuse {
				if !errors.As(err, &ce) {
					t.Fatalf("err = %v, want ContentError", err)
				}
				if strings.HasPrefix(tc.name, "case-") && (strings.Count(err.Error(), `"entry/`) != 2 || !strings.Contains(err.Error(), "differing only in case")) {
					t.Fatalf("err = %v, want both paths named", err)
				}
				ents, _ := os.ReadDir(filepath.Join(c.Path(), "commits"))
				if len(ents) != 0 {
					t.Fatalf("a refused commit left %v in the cache", ents)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(snap.Dir, "entry", "SKILL.md")); err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{".git", ".GIT"} {
				if _, err := os.Lstat(filepath.Join(snap.Dir, "entry", n)); !os.IsNotExist(err) {
					t.Fatalf("%s written: %v", n, err)
				}
			}
		})
	}
}
