package gitregistry

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestRefreshShares is issue 19 item 3 for a refresh in a process that
// handed out roots: the unchanged entries are offered where they were
// handed out before, the changed ones in the new commit's directory, each
// root holding exactly the entry's tree at the commit offered; an entry
// read from outside itself is never shared; and a change that makes a
// shared entry part of another (an ancestor became an entry) has the
// commit materialized whole.
func TestRefreshShares(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t)
	skill := func(name, desc string) string {
		return "---\nname: " + name + "\ndescription: " + desc + "\n---\nBody.\n"
	}
	repo.Write(map[string]string{
		"README.md":                       "registry\n",
		"plugins/a/SYMPOSIUM.toml":        "name = \"a\"\n\n[[skills]]\nsource.path = \"skills\"\n",
		"plugins/a/skills/s/SKILL.md":     skill("s", "inner of a"),
		"plugins/b/SYMPOSIUM.toml":        "name = \"b\"\n",
		"plugins/out/SYMPOSIUM.toml":      "name = \"out\"\n\n[[skills]]\nsource.path = \"../../common\"\n",
		"common/x/SKILL.md":               skill("x", "read by out"),
		"group/one/SKILL.md":              skill("one", "first"),
		"group/two/SKILL.md":              skill("two", "second"),
		"group/two/references/details.md": "details\n",
	})
	c1 := repo.Commit("first")
	bare := repo.Bare()
	cache := t.TempDir()
	p, logs := newPM(t, Config{URL: bare}, cache, nil)
	if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
		t.Fatal(err)
	}
	before, err := p.ActivePlugins(ctx, nil) // roots of c1 are in use
	if err != nil {
		t.Fatal(err)
	}
	roots1 := rootsByName(before)

	// change commits files, refreshes p and returns the commit and what p
	// then offers.
	change := func(files map[string]string, msg string) (string, []protocol.Offer) {
		t.Helper()
		repo.Write(files)
		commit := repo.Commit(msg)
		repo.Push(bare)
		if done, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil || !done {
			t.Fatalf("refresh to %s: %v %v", msg, done, err)
		}
		offers, err := p.ActivePlugins(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		return commit, offers
	}

	c2, after := change(map[string]string{"plugins/b/SYMPOSIUM.toml": "name = \"b\"\ndepends-on = [\"serde\"]\n"}, "change b")
	roots2 := rootsByName(after)
	dir1 := filepath.Join(p.cache.Path(), "commits", c1)
	dir2 := filepath.Join(p.cache.Path(), "commits", c2)
	for name, want := range map[string]string{
		"plugins/a": roots1["plugins/a"], "group/one": roots1["group/one"], "group/two": roots1["group/two"], // shared
		"plugins/b":   filepath.Join(dir2, "plugins", "b"),   // changed
		"plugins/out": filepath.Join(dir2, "plugins", "out"), // reads from outside itself
	} {
		if roots2[name] != want {
			t.Errorf("after the refresh, %s is offered at %s, want %s", name, roots2[name], want)
		}
	}
	if !strings.HasPrefix(roots1["plugins/a"], dir1) {
		t.Fatalf("root of plugins/a before the refresh: %s", roots1["plugins/a"])
	}
	for _, o := range after {
		if o.ID.Version != c2 {
			t.Fatalf("%s offered at version %s, want %s", o.ID.Name, o.ID.Version, c2)
		}
		checkRoot(t, repo, c2, o.ID.Name, o.Root)
	}
	// The old roots are intact, the changed one with its old content.
	for _, o := range before {
		checkRoot(t, repo, c1, o.ID.Name, o.Root)
	}

	// Another process on the same cache offers the same roots, from the
	// persisted index, and again with the index lost (built from the
	// commit's directory and the ones it shares with).
	for _, lost := range []bool{false, true} {
		if lost {
			if err := os.Remove(p.cache.SidecarPath(c2, indexSuffix)); err != nil {
				t.Fatal(err)
			}
		}
		q, _ := newPM(t, Config{URL: bare}, cache, nil)
		got, err := q.ActivePlugins(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r := rootsByName(got); len(r) != len(roots2) {
			t.Fatalf("another process (index lost: %v) offers %v, want %v", lost, r, roots2)
		} else {
			for n, root := range roots2 {
				if r[n] != root {
					t.Fatalf("another process (index lost: %v) offers %s at %s, want %s", lost, n, r[n], root)
				}
			}
		}
		q.Close()
	}
	// A shared entry whose manifest is gone from where it lies is an entry
	// with a problem, not offered, when the index is built again.
	if err := os.Remove(filepath.Join(roots2["group/one"], "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p.cache.SidecarPath(c2, indexSuffix)); err != nil {
		t.Fatal(err)
	}
	r, rlogs := newPM(t, Config{URL: bare}, cache, nil)
	got, err := r.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := rootsByName(got); len(n) != len(roots2)-1 || n["group/one"] != "" {
		t.Fatalf("with group/one's SKILL.md gone, offered %v", n)
	}
	if !strings.Contains(rlogs.String(), "holds no SYMPOSIUM.toml or SKILL.md") {
		t.Fatalf("the entry's problem is not reported:\n%s", rlogs)
	}
	r.Close()
	// Put back, for what follows.
	if err := os.WriteFile(filepath.Join(roots2["group/one"], "SKILL.md"), []byte(skill("one", "first")), 0o644); err != nil {
		t.Fatal(err)
	}

	// A bare skill added above shared entries makes them part of it: the
	// new commit cannot share them, and is materialized whole.
	c3, third := change(map[string]string{"group/SKILL.md": skill("group", "all of it")}, "group skill")
	roots3 := rootsByName(third)
	if _, ok := roots3["group/one"]; ok {
		t.Fatalf("group/one still offered inside the group skill: %v", roots3)
	}
	for _, o := range third {
		checkRoot(t, repo, c3, o.ID.Name, o.Root)
	}
	// Materialized whole as a copy beside the directory that shared (which
	// stays for whoever was handed roots of it until collected).
	whole := commitDirOf(roots3["plugins/a"], "plugins/a")
	if whole != c3+"-1" {
		t.Fatalf("commit 3 is served from %s, want its whole copy %s-1", whole, c3[:8])
	}
	if s, err := p.cache.Shared(whole); err != nil || len(s) != 0 {
		t.Fatalf("commit 3 shares %v (%v), want nothing", s, err)
	}
	if !strings.Contains(logs.String(), "materializing a commit that shares its entries in full") {
		t.Fatalf("no log of the commit materialized whole:\n%s", logs)
	}
}

// commitDirOf is the name of the commit directory that root, the root of
// entry, lies in.
func commitDirOf(root, entry string) string {
	return filepath.Base(strings.TrimSuffix(root, string(filepath.Separator)+filepath.FromSlash(entry)))
}

// rootsByName maps offers' entry paths to their roots.
func rootsByName(offers []protocol.Offer) map[string]string {
	m := map[string]string{}
	for _, o := range offers {
		m[o.ID.Name] = o.Root
	}
	return m
}

// checkRoot compares the files below root with the entry's files at
// commit, as git lists them (git's output trimmed of its final newlines,
// so the files are compared so too).
func checkRoot(t *testing.T, repo *gittest.Repo, commit, entry, root string) {
	t.Helper()
	want := map[string]string{}
	for _, name := range strings.Fields(repo.Git("ls-tree", "-r", "--name-only", commit, "--", entry+"/")) {
		want[strings.TrimPrefix(name, entry+"/")] = repo.Git("show", commit+":"+name)
	}
	got := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		got[filepath.ToSlash(rel)] = strings.TrimRight(string(b), "\n")
		return err
	})
	if err != nil {
		t.Fatalf("%s at %s: %v", entry, commit, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s at %s: root %s holds %d files, want %d (%v)", entry, commit[:8], root, len(got), len(want), want)
	}
	for n, w := range want {
		if got[n] != w {
			t.Fatalf("%s at %s: %s is %q, want %q", entry, commit[:8], n, got[n], w)
		}
	}
}

// TestIndexHomeChecked: the commit directory a persisted index names as
// holding an entry is where that entry's root is handed out, so anything
// but the name of a commit's directory there (a full commit id, or one
// with the number of a repaired copy) makes the index damaged, never a
// root outside the cache.
func TestIndexHomeChecked(t *testing.T) {
	commit := strings.Repeat("c", 40)
	d := strings.Repeat("d", 40)
	for home, valid := range map[string]bool{
		d: true, d + "-1": true, d + "-27": true, "": true,
		"../../../etc": false, d[:39]: false, d + "-0": false, d + "-1/..": false, d + "/../../x": false, d + "-": false,
	} {
		idx := &index{Format: indexFormat, Commit: commit, Entries: []entry{{Path: "e", Kind: "skill", Problem: "broken", Home: home}}}
		data := encodeIndex(idx, []stamp{{Dir: ""}})
		_, _, herr := decodeHead(data, commit)
		_, _, ierr := decodeIndex(data, commit)
		if (herr == nil) != valid || (ierr == nil) != valid {
			t.Errorf("home %q: decodeHead %v, decodeIndex %v; want an error: %v", home, herr, ierr, !valid)
		}
	}
}

// TestNoStaleSharedListAfterKilledRefresh: a refresh that shares writes the
// list of what the new commit's directory shares before publishing the
// directory; one killed between the two leaves the list behind, describing
// no directory. When a later refresh then turns the previous commit's
// directory into the new commit's in place (alone with the cache, after a
// start that could not collect), the directory it publishes holds the
// whole tree: that list must not be taken for it, or the roots would be
// handed out in the previous commit's directory, which the update renamed
// away. Every root offered, by the refresh's process and by a later one,
// exists and holds the entry's tree at the commit offered.
func TestNoStaleSharedListAfterKilledRefresh(t *testing.T) {
	ctx := context.Background()
	repo := gittest.NewRepo(t)
	repo.Write(map[string]string{
		"README.md":                "registry\n",
		"plugins/a/SYMPOSIUM.toml": "name = \"a\"\n",
		"plugins/b/SYMPOSIUM.toml": "name = \"b\"\n",
		"group/one/SKILL.md":       "---\nname: one\ndescription: first\n---\n",
	})
	c1 := repo.Commit("first")
	bare := repo.Bare()
	cache := t.TempDir()
	refreshed(t, bare, cache) // c1 materialized, its index persisted

	repo.Write(map[string]string{"plugins/b/SYMPOSIUM.toml": "name = \"b\"\ndepends-on = [\"serde\"]\n"})
	c2 := repo.Commit("change b")
	repo.Push(bare)

	// R1: a connection with roots of c1 in use refreshes: c2 shares.
	p1, _ := newPM(t, Config{URL: bare}, cache, nil)
	if _, err := p1.ActivePlugins(ctx, nil); err != nil {
		t.Fatal(err)
	}
	stateFile := filepath.Join(p1.cache.Path(), "state.json")
	stateC1, err := os.ReadFile(stateFile)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p1.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
		t.Fatal(err)
	}
	shared := p1.cache.SidecarPath(c2, "shared")
	if _, err := os.Stat(shared); err != nil {
		t.Fatalf("test setup: c2 does not share: %v", err)
	}
	commits := filepath.Join(p1.cache.Path(), "commits")
	p1.Close()
	// A hook process h opens the cache (and collects, being alone).
	h, _ := newPM(t, Config{URL: bare}, cache, nil)
	if _, err := h.open(ctx); err != nil {
		t.Fatal(err)
	}
	// What R1 leaves when killed after writing c2.shared, before
	// publishing c2's directory (and so before state.json moved).
	os.RemoveAll(filepath.Join(commits, c2))
	os.Remove(filepath.Join(commits, c2+".index"))
	os.Remove(filepath.Join(commits, c2+".tree"))
	if err := os.WriteFile(stateFile, stateC1, 0o644); err != nil {
		t.Fatal(err)
	}

	// R2 starts while h holds the cache (so it collects nothing), h
	// exits, R2 refreshes: alone with the cache, it updates in place.
	p2, logs := newPM(t, Config{URL: bare}, cache, nil)
	if _, err := p2.open(ctx); err != nil {
		t.Fatal(err)
	}
	h.Close()
	if changed, err := p2.Refresh(ctx, protocol.UpdateCheck, false); err != nil || !changed {
		t.Fatalf("refresh: %v %v", changed, err)
	}
	if !strings.Contains(logs.String(), "updated commit in place") {
		t.Fatalf("test setup: R2 did not update in place:\n%s", logs)
	}
	if _, err := os.Stat(filepath.Join(commits, c1)); err == nil {
		t.Fatalf("test setup: c1's directory is still there")
	}
	if _, err := os.Stat(shared); err == nil {
		t.Errorf("the list of what c2 shared, left by the killed refresh, is still beside the directory updated in place")
	}
	offers, err := p2.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	p2.Close()
	// A later process on the cache (the next hook) too.
	q, _ := newPM(t, Config{URL: bare}, cache, nil)
	later, err := q.ActivePlugins(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(offers) == 0 || len(later) != len(offers) {
		t.Fatalf("the refresh's process offered %d entries, a later one %d", len(offers), len(later))
	}
	for _, o := range append(offers, later...) {
		if o.ID.Version != c2 {
			t.Fatalf("%s offered at %s, want %s", o.ID.Name, o.ID.Version, c2)
		}
		if _, err := os.Stat(o.Root); err != nil {
			t.Errorf("%s@%s offered at a root that does not exist: %v", o.ID.Name, o.ID.Version[:12], err)
			continue
		}
		checkRoot(t, repo, c2, o.ID.Name, o.Root)
	}
}
