//go:build unix

package gitregistry

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// heldRoots are the roots a connection was handed, with the inodes of
// their directories then: a root must stay that very directory, with its
// files, for the connection's life.
type heldRoots map[string]uint64

// hold records the roots of offers, but those of the entries in skip (the
// ones a test damages).
func hold(t *testing.T, offers []protocol.Offer, skip ...string) heldRoots {
	t.Helper()
	h := heldRoots{}
	for _, o := range offers {
		if slices.Contains(skip, o.ID.Name) {
			continue
		}
		fi, err := os.Stat(o.Root)
		if err != nil {
			t.Fatalf("root %s: %v", o.Root, err)
		}
		h[o.Root] = inode(fi)
	}
	return h
}

// lost returns the roots that are no longer the directory handed out (gone,
// or another directory in their place), or whose manifest cannot be read.
func (h heldRoots) lost() []string {
	var out []string
	for root, ino := range h {
		fi, err := os.Stat(root)
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("%s: %v", root, err))
		case inode(fi) != ino:
			out = append(out, root+": another directory in its place")
		default:
			_, err1 := os.Stat(filepath.Join(root, "SYMPOSIUM.toml"))
			_, err2 := os.Stat(filepath.Join(root, "SKILL.md"))
			if err1 != nil && err2 != nil {
				out = append(out, root+": no manifest")
			}
		}
	}
	slices.Sort(out)
	return out
}

// checkRoots checks the roots of offers of the fixture's commit against
// git's listing of each entry; the entry with symbolic links (some of
// which are not written) only for its manifest.
func checkRoots(t *testing.T, f *fixture, offers []protocol.Offer) {
	t.Helper()
	for _, o := range offers {
		if o.ID.Name == "standalone/git-hygiene" {
			if _, err := os.Stat(filepath.Join(o.Root, "SKILL.md")); err != nil {
				t.Fatalf("%s: %v", o.ID.Name, err)
			}
			continue
		}
		checkRoot(t, f.repo, f.commit, o.ID.Name, o.Root)
	}
}

// TestRepairKeepsOtherConnectionsRoots: a connection (a) has been handed
// the roots of the commit served when an entry directory of that commit is
// deleted behind the cache's back; another connection's PM (b) finds the
// commit damaged and repairs it. The repaired copy is offered from then on;
// every root a was handed that was not damaged stays the very directory it
// was, at every moment of the repair (checked before each write b makes)
// and after it — also when the repair fails (the local repository is gone
// too), where removing the damaged directory would lose them for good. Once
// no connection is left, a later start collects the damaged copy.
func TestRepairKeepsOtherConnectionsRoots(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		breakRepo bool
	}{{"repaired", false}, {"repair-fails", true}} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			a, _ := newPM(t, Config{URL: f.url}, cache, nil)
			if _, err := a.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
				t.Fatal(err)
			}
			before, err := a.ActivePlugins(ctx, nil)
			if err != nil || !slices.Equal(offerNames(before), wantEntries) {
				t.Fatalf("active_plugins: %v %v", offerNames(before), err)
			}
			held := hold(t, before, "rust")
			damaged := rootsByName(before)["rust"]
			if err := os.RemoveAll(damaged); err != nil {
				t.Fatal(err)
			}
			if tc.breakRepo {
				os.RemoveAll(filepath.Join(a.cache.Path(), "repo", "objects"))
			}

			b, logs := newPM(t, Config{URL: f.url}, cache, nil)
			var mu sync.Mutex
			var during []string
			b.beforeWrite = func(path string, n int) error {
				if lost := held.lost(); len(lost) > 0 {
					mu.Lock()
					during = append(during, fmt.Sprintf("before writing %s: %s", filepath.Base(path), lost[0]))
					mu.Unlock()
				}
				return nil
			}
			n := f.srv.Requests.Load()
			again, err := b.ActivePlugins(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(during) > 0 {
				t.Fatalf("roots of connection a were lost during the repair (%d writes), first %s", len(during), during[0])
			}
			if lost := held.lost(); len(lost) > 0 {
				t.Fatalf("roots of connection a lost after the repair: %v", lost)
			}
			if !strings.Contains(logs.String(), "damaged") {
				t.Fatalf("no warning:\n%s", logs)
			}
			if d := f.srv.Requests.Load() - n; d != 0 {
				t.Fatalf("the repair used the network (%d requests)", d)
			}
			if tc.breakRepo {
				if len(again) != 0 {
					t.Fatalf("offers of a commit that could not be repaired: %v", offerNames(again))
				}
				return
			}
			if !slices.Equal(offerNames(again), wantEntries) {
				t.Fatalf("after the repair: %v", offerNames(again))
			}
			checkRoots(t, f, again)
			if rust := rootsByName(again)["rust"]; rust == damaged {
				t.Fatalf("the repaired entry is offered at the damaged root %s", rust)
			}
			// Connection a's next request is answered from the repaired
			// copy too, while its old roots stay.
			next, err := a.ActivePlugins(ctx, nil)
			if err != nil || rootsByName(next)["rust"] != rootsByName(again)["rust"] {
				t.Fatalf("a's next answer: %v %v", rootsByName(next), err)
			}
			a.Close()
			b.Close()
			c, _ := newPM(t, Config{URL: f.url}, cache, nil)
			later, err := c.ActivePlugins(ctx, nil)
			if err != nil || !slices.Equal(offerNames(later), wantEntries) {
				t.Fatalf("after a later start: %v %v", offerNames(later), err)
			}
			checkRoots(t, f, later)
			if _, err := os.Stat(filepath.Dir(damaged)); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the damaged copy %s was not collected once unused: %v", filepath.Dir(damaged), err)
			}
		})
	}
}

// TestRepairWhileAnotherProcessServes runs the processes of a host's
// connections on one cache: a reader process holds the roots it was
// handed and reads them without pause while two hook processes, started
// together, find an entry of the commit deleted and repair it; then the
// reader checks that every root it holds (but the deleted entry's) is
// still the directory it was handed, and that its next request is served
// from the repaired copy. A start while the reader lives collects nothing;
// the first start after it collects the damaged copy.
func TestRepairWhileAnotherProcessServes(t *testing.T) {
	f := newFixture(t)
	cache := t.TempDir()
	refreshed(t, f.url, cache)
	helper := func(mode string) *exec.Cmd {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRepairHelperProcess$")
		cmd.Env = append(os.Environ(), "GITREGISTRY_REPAIR_HELPER="+mode, "GITREGISTRY_CACHE="+cache, "GITREGISTRY_URL="+f.url)
		return cmd
	}

	reader := helper("reader")
	stdin, err := reader.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	reader.Stderr = &stderr
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	defer reader.Process.Kill()
	lines := bufio.NewScanner(stdout)
	next := func(prefix string) string {
		t.Helper()
		for lines.Scan() {
			if l := lines.Text(); strings.HasPrefix(l, prefix) {
				return strings.TrimPrefix(l, prefix)
			}
		}
		t.Fatalf("reader ended without %q: %v\n%s", prefix, lines.Err(), stderr.String())
		return ""
	}
	damaged := next("rust=")
	if err := os.RemoveAll(damaged); err != nil {
		t.Fatal(err)
	}

	// Two hook processes at once, both finding the commit damaged.
	var wg sync.WaitGroup
	outs := make([][]byte, 2)
	errs := make([]error, 2)
	for i := range outs {
		wg.Go(func() { outs[i], errs[i] = helper("hook").CombinedOutput() })
	}
	wg.Wait()
	for i, out := range outs {
		if errs[i] != nil {
			t.Fatalf("hook %d: %v\n%s", i, errs[i], out)
		}
	}
	if _, err := io.WriteString(stdin, "check\n"); err != nil {
		t.Fatal(err)
	}
	if got := next("lost="); got != "0" {
		t.Fatalf("the reader lost roots it was handed while the hooks repaired the commit: %s\n%s", got, stderr.String())
	}
	var repaired string
	for i, out := range outs {
		_, rest, ok := strings.Cut(string(out), "rust=")
		root, _, _ := strings.Cut(rest, "\n")
		if !ok || root == damaged || (repaired != "" && root != repaired) {
			t.Fatalf("hook %d offered rust at %q (damaged %s, other hook %q)\n%s", i, root, damaged, repaired, out)
		}
		repaired = root
	}
	if _, err := os.Stat(filepath.Join(repaired, "SYMPOSIUM.toml")); err != nil {
		t.Fatalf("repaired root: %v", err)
	}
	if got := next("next="); got != repaired {
		t.Fatalf("the reader's next request offers rust at %s, want the repaired %s", got, repaired)
	}
	// A start while the reader lives collects nothing.
	if out, err := helper("hook").CombinedOutput(); err != nil {
		t.Fatalf("hook: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Dir(damaged)); err != nil {
		t.Fatalf("the damaged copy was collected while the reader held roots of it: %v", err)
	}
	stdin.Close()
	if err := reader.Wait(); err != nil {
		t.Fatalf("reader: %v\n%s", err, stderr.String())
	}
	// The first start alone collects it.
	out, err := helper("hook").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "rust="+repaired+"\n") {
		t.Fatalf("hook alone: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Dir(damaged)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the damaged copy was not collected once unused: %v", err)
	}
}

// TestRepairHelperProcess is a process of TestRepairWhileAnotherProcessServes.
// A reader prints the root of rust, then stats every root it was handed
// without pause until it reads "check", then prints how many roots were
// lost at any moment (lost=N) and where its next answer offers rust
// (next=ROOT), and ends with its input. A hook prints where active_plugins
// offers rust (rust=ROOT).
func TestRepairHelperProcess(t *testing.T) {
	mode := os.Getenv("GITREGISTRY_REPAIR_HELPER")
	if mode == "" {
		t.Skip("helper process")
	}
	ctx := context.Background()
	p, _ := newPM(t, Config{URL: os.Getenv("GITREGISTRY_URL")}, os.Getenv("GITREGISTRY_CACHE"), nil)
	offers, err := p.ActivePlugins(ctx, nil)
	if err != nil || !slices.Equal(offerNames(offers), wantEntries) {
		t.Fatalf("active_plugins: %v %v", offerNames(offers), err)
	}
	if mode == "hook" {
		fmt.Printf("rust=%s\n", rootsByName(offers)["rust"])
		return
	}
	held := hold(t, offers, "rust")
	lost := map[string]bool{}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			for _, l := range held.lost() {
				lost[l] = true
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	fmt.Printf("rust=%s\n", rootsByName(offers)["rust"])
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() && in.Text() != "check" {
	}
	close(stop)
	<-done
	for _, l := range held.lost() {
		lost[l] = true
	}
	fmt.Printf("lost=%d\n", len(lost))
	for l := range lost {
		fmt.Fprintln(os.Stderr, "lost:", l)
	}
	again, err := p.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("next=%s\n", rootsByName(again)["rust"])
	io.Copy(io.Discard, os.Stdin)
}

// shareRepo is a registry without symbolic links, whose refreshes share.
func shareRepo(t *testing.T) (*gittest.Repo, string, string) {
	t.Helper()
	repo := gittest.NewRepo(t)
	repo.Write(map[string]string{
		"README.md":                "registry\n",
		"plugins/a/SYMPOSIUM.toml": "name = \"a\"\n",
		"plugins/b/SYMPOSIUM.toml": "name = \"b\"\n",
		"group/one/SKILL.md":       "---\nname: one\ndescription: first\n---\n",
		"group/two/SKILL.md":       "---\nname: two\ndescription: second\n---\n",
	})
	c1 := repo.Commit("first")
	return repo, repo.Bare(), c1
}

// TestRepairSharingCommit: a connection holds roots of a commit whose
// directory shares entries with the previous commit's when another
// connection cannot read the list of what it shares and materializes the
// commit whole: the whole copy is published beside it, and the roots held
// (in the sharing directory and in the one it shares with) all stay. Once
// unused, both are collected; the whole copy is kept.
func TestRepairSharingCommit(t *testing.T) {
	ctx := context.Background()
	repo, bare, c1 := shareRepo(t)
	cache := t.TempDir()
	p, _ := newPM(t, Config{URL: bare}, cache, nil)
	if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
		t.Fatal(err)
	}
	before, err := p.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	repo.Write(map[string]string{"plugins/b/SYMPOSIUM.toml": "name = \"b\"\ndescription = \"changed\"\n"})
	c2 := repo.Commit("change b")
	repo.Push(bare)
	if changed, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil || !changed {
		t.Fatalf("refresh: %v %v", changed, err)
	}
	mid, err := p.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := commitDirOf(rootsByName(mid)["plugins/a"], "plugins/a"); got != c1 {
		t.Fatalf("test setup: plugins/a of %s offered in %s, not shared with %s", c2[:8], got, c1[:8])
	}
	held := hold(t, append(before, mid...))
	if err := os.WriteFile(p.cache.SidecarPath(c2, "shared"), []byte("not a list\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	q, logs := newPM(t, Config{URL: bare}, cache, nil)
	var mu sync.Mutex
	var lostDuring []string
	q.beforeWrite = func(string, int) error {
		lost := held.lost()
		mu.Lock()
		lostDuring = append(lostDuring, lost...)
		mu.Unlock()
		return nil
	}
	got, err := q.ActivePlugins(ctx, nil)
	if err != nil || len(got) != len(mid) {
		t.Fatalf("active_plugins: %v %v", offerNames(got), err)
	}
	if len(lostDuring) > 0 || len(held.lost()) > 0 {
		t.Fatalf("roots held were lost while the commit was materialized whole: %v %v\n%s", lostDuring, held.lost(), logs)
	}
	for _, o := range got {
		if dir := commitDirOf(o.Root, o.ID.Name); dir != c2+"-1" {
			t.Errorf("%s offered in %s, want the whole copy %s-1", o.ID.Name, dir, c2[:8])
		}
		checkRoot(t, repo, c2, o.ID.Name, o.Root)
	}
	p.Close()
	q.Close()
	r, _ := newPM(t, Config{URL: bare}, cache, nil)
	later, err := r.ActivePlugins(ctx, nil)
	if err != nil || !slices.Equal(offerNames(later), offerNames(got)) {
		t.Fatalf("after a later start: %v %v", offerNames(later), err)
	}
	for _, o := range later {
		checkRoot(t, repo, c2, o.ID.Name, o.Root)
	}
	ents, _ := os.ReadDir(filepath.Join(r.cache.Path(), "commits"))
	for _, e := range ents {
		if n := e.Name(); n != c2+"-1" && !strings.HasPrefix(n, c2+"-1.") {
			t.Errorf("commits/%s left after collection", n)
		}
	}
}

// TestShareFromRepairedCopy: a refresh in a connection that was handed
// roots of a repaired copy of the previous commit shares the unchanged
// entries with that copy, by its name: their roots are handed out there,
// and collection keeps that copy (not the damaged one it replaced) while
// the commit served shares with it.
func TestShareFromRepairedCopy(t *testing.T) {
	ctx := context.Background()
	repo, bare, c1 := shareRepo(t)
	cache := t.TempDir()
	refreshed(t, bare, cache)
	p, _ := newPM(t, Config{URL: bare}, cache, nil)
	first, err := p.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(rootsByName(first)["group/two"]); err != nil {
		t.Fatal(err)
	}
	q, _ := newPM(t, Config{URL: bare}, cache, nil)
	fixed, err := q.ActivePlugins(ctx, nil) // repairs; roots of the copy in use
	if err != nil || len(fixed) != len(first) {
		t.Fatalf("active_plugins: %v %v", offerNames(fixed), err)
	}
	copyName := c1 + "-1"
	if got := commitDirOf(rootsByName(fixed)["group/two"], "group/two"); got != copyName {
		t.Fatalf("the repaired entry is offered in %s, want a copy of its own, %s", got, copyName)
	}
	repo.Write(map[string]string{"plugins/b/SYMPOSIUM.toml": "name = \"b\"\ndescription = \"changed\"\n"})
	c2 := repo.Commit("change b")
	repo.Push(bare)
	if changed, err := q.Refresh(ctx, protocol.UpdateCheck, false); err != nil || !changed {
		t.Fatalf("refresh: %v %v", changed, err)
	}
	after, err := q.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	check := func(offers []protocol.Offer) {
		t.Helper()
		for _, o := range offers {
			want := copyName
			if o.ID.Name == "plugins/b" {
				want = c2
			}
			if dir := commitDirOf(o.Root, o.ID.Name); dir != want {
				t.Errorf("%s offered in %s, want %s", o.ID.Name, dir, want)
			}
			checkRoot(t, repo, c2, o.ID.Name, o.Root)
		}
	}
	check(after)
	p.Close()
	q.Close()
	r, _ := newPM(t, Config{URL: bare}, cache, nil)
	later, err := r.ActivePlugins(ctx, nil)
	if err != nil || len(later) != len(after) {
		t.Fatalf("after a later start: %v %v", offerNames(later), err)
	}
	check(later)
	if _, err := os.Stat(filepath.Join(r.cache.Path(), "commits", c1)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the damaged copy was not collected: %v", err)
	}
}
