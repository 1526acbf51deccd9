package gitcache

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
)

// TestUpdateShares is issue 19 item 3 for a refresh in a process that
// handed out roots of the commit it served: the new commit's directory
// leaves out the entries that did not change, which stay where they were
// handed out, so the update writes in proportion to the change; what is
// shared is recorded, kept by collection, flattened across updates, and
// given up by the next update that may not share.
func TestUpdateShares(t *testing.T) {
	const entries, size = 200, 4 << 10
	repo := gittest.NewRepo(t)
	src := map[string]string{"README.md": "registry\n"}
	for i := range entries {
		src[fmt.Sprintf("e%03d/SKILL.md", i)] = "---\nname: e\ndescription: d\n---\n" + randomText(uint64(i), size)
	}
	repo.Write(src)
	c1 := repo.Commit("first")
	bare := repo.Bare()
	root := t.TempDir()
	count := &writeCounter{}
	cfg := Config{Root: root, Name: "share", URL: bare, Logger: testLogger(t), BeforeWrite: count.hook}
	c, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	s1, _, err := c.Update(context.Background(), Fetch)
	if err != nil || s1.Commit != c1 {
		t.Fatalf("first update: %+v %v", s1, err)
	}
	count.take()
	// What a registry shares: every entry, where it is held.
	var asked []string
	share := func(prev string) Share {
		asked = append(asked, prev)
		held, err := c.Shared(prev)
		if err != nil {
			t.Fatal(err)
		}
		s := Share{}
		for i := range entries {
			p, home := fmt.Sprintf("e%03d", i), prev
			if h, ok := held[p]; ok {
				home = h
			}
			s[p] = home
		}
		return s
	}
	push := func(files map[string]string, remove ...string) string {
		t.Helper()
		repo.Write(files)
		repo.Remove(remove...)
		commit := repo.Commit("change")
		repo.Push(bare)
		return commit
	}

	// Roots of c1 were handed out: the update shares.
	changed := "---\nname: e\ndescription: changed\n---\n" + randomText(999, size)
	c2 := push(map[string]string{"e100/SKILL.md": changed, "new/SKILL.md": "---\nname: n\ndescription: new\n---\n"}, "e007")
	s2, moved, _, err := c.UpdateSharing(context.Background(), Check, share)
	if err != nil || !moved || s2.Commit != c2 {
		t.Fatalf("second update: %+v %v %v", s2, moved, err)
	}
	if len(asked) != 1 || asked[0] != c1 {
		t.Fatalf("share asked for %v, want [%s]", asked, c1)
	}
	got2, err := c.Shared(c2)
	if err != nil {
		t.Fatal(err)
	}
	// Besides the change, the update writes the list of what it shares
	// (a line per shared directory).
	wrote, _ := count.take()
	list := int64(len(encodeShare(got2)))
	if limit := int64(2*len(changed)) + list; wrote > limit {
		t.Fatalf("a shared update changing one file wrote %d bytes into the commit directory, want at most %d (of which %d for the list of what it shares)", wrote, limit, list)
	}
	t.Logf("one-file change, shared: %d bytes written, %d of them the list of what the commit shares", wrote, list)
	if len(got2) != entries-2 || got2["e000"] != c1 || got2["e100"] != "" || got2["e007"] != "" {
		t.Fatalf("commit 2 shares %d directories (e000 %q, e100 %q, e007 %q), want the %d unchanged ones with %s", len(got2), got2["e000"], got2["e100"], got2["e007"], entries-2, c1)
	}
	if _, err := os.Stat(filepath.Join(s2.Dir, "e000")); !os.IsNotExist(err) {
		t.Fatalf("a shared entry is in the new commit's directory: %v", err)
	}
	checkSharedTree(t, repo.Dir, c2, s2.Dir, got2)
	checkTree(t, repo.Dir, c1, s1.Dir) // the previous directory is whole and unchanged
	// The totals kept for the limits are the whole tree's, as a directory
	// materialized in full counts them.
	whole, err := Open(context.Background(), Config{Root: t.TempDir(), Name: "whole", URL: bare, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Close()
	if _, _, err := whole.Update(context.Background(), Fetch); err != nil {
		t.Fatal(err)
	}
	got, ok := c.readTreeStats(c2)
	want, wok := whole.readTreeStats(c2)
	if !ok || !wok || got != want {
		t.Fatalf("shared commit's totals %+v (%v), want %+v (%v)", got, ok, want, wok)
	}

	// Again, with roots of c2 handed out: the shares are flattened to the
	// directories that hold the entries.
	c3 := push(map[string]string{"e050/SKILL.md": changed})
	s3, _, _, err := c.UpdateSharing(context.Background(), Check, share)
	if err != nil || s3.Commit != c3 {
		t.Fatalf("third update: %+v %v", s3, err)
	}
	got3, err := c.Shared(c3)
	if err != nil {
		t.Fatal(err)
	}
	if got3["e000"] != c1 || got3["e100"] != c2 || got3["e050"] != "" || len(got3) != entries-2 {
		t.Fatalf("commit 3 shares e000 with %q, e100 with %q, e050 with %q (%d in all)", got3["e000"], got3["e100"], got3["e050"], len(got3))
	}
	checkSharedTree(t, repo.Dir, c3, s3.Dir, got3)
	c.Close()

	// Collection keeps the directories the commit served shares with.
	c, err = Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { c.Close() }()
	for _, commit := range []string{c1, c2, c3} {
		if _, ok := c.commitDir(commit); !ok {
			t.Fatalf("collection removed commit %s, which commit 3 shares with", commit)
		}
	}
	checkSharedTree(t, repo.Dir, c3, s3.Dir, got3)

	// A process that handed nothing out and does not share: the previous
	// directory is not updated in place (it does not hold its tree), the
	// next is materialized whole, linking the shared files where they are.
	c4 := push(map[string]string{"e060/SKILL.md": changed})
	s4, _, err := c.Update(context.Background(), Check)
	if err != nil || s4.Commit != c4 {
		t.Fatalf("fourth update: %+v %v", s4, err)
	}
	if s, err := c.Shared(c4); err != nil || s != nil {
		t.Fatalf("commit 4 shares %v (%v), want nothing", s, err)
	}
	checkTree(t, repo.Dir, c4, s4.Dir)
	if !sameFile(t, filepath.Join(s4.Dir, "e000", "SKILL.md"), filepath.Join(s1.Dir, "e000", "SKILL.md")) {
		t.Fatal("an unchanged file shared with commit 1 was written again, not linked")
	}
	c.Close()
	c, err = Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, commit := range []string{c1, c2, c3} {
		if _, ok := c.commitDir(commit); ok {
			t.Fatalf("collection kept commit %s, which nothing shares with", commit)
		}
	}
	checkTree(t, repo.Dir, c4, s4.Dir)

	// A directory that would share with too many others is written whole.
	c5 := push(map[string]string{"e070/SKILL.md": changed})
	if _, err := c.Current(context.Background()); err != nil { // hands c4 out
		t.Fatal(err)
	}
	many := func(prev string) Share {
		s := share(prev)
		for i := range maxShareHomes + 1 {
			s[fmt.Sprintf("e%03d", i)] = strings.Repeat(fmt.Sprint(i%10), 40)
		}
		return s
	}
	s5, _, _, err := c.UpdateSharing(context.Background(), Check, many)
	if err != nil || s5.Commit != c5 {
		t.Fatalf("fifth update: %+v %v", s5, err)
	}
	if s, err := c.Shared(c5); err != nil || s != nil {
		t.Fatalf("commit 5 shares %d directories (%v), want nothing: its share names %d commits", len(s), err, maxShareHomes+1)
	}
	checkTree(t, repo.Dir, c5, s5.Dir)
}

// sameFile reports whether two paths name one file (a hard link).
func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	if err != nil {
		t.Fatal(err)
	}
	return os.SameFile(fa, fb)
}

// TestParseShare checks the shared sidecar's parser refuses what
// encodeShare does not write: it names the directories roots are handed
// out in.
func TestParseShare(t *testing.T) {
	id, id2 := strings.Repeat("a", 40), strings.Repeat("b", 40)
	ok := Share{"e1": id, "g/e2": id2}
	if got, err := parseShare(encodeShare(ok)); err != nil || !maps.Equal(got, ok) {
		t.Fatalf("round trip: %v %v", got, err)
	}
	head := "homes " + id + "\n"
	for _, bad := range []string{
		head + id + " ../outside\n",
		head + id + " /abs\n",
		head + id + " a/../b\n",
		head + id + " .\n",
		head + id + " \n",
		head + "../../etc e1\n",
		head + strings.Repeat("a", 39) + " e1\n",
		head + strings.Repeat("g", 40) + " e1\n",
		head + id + " e1", // no newline: cut short
		head + id + "e1\n",
		head + id2 + " e1\n",                            // a commit the first line does not name
		"homes " + id + " " + id2 + "\n" + id + " e1\n", // one it names but no line uses
		"homes " + id2 + " " + id + "\n" + id + " e1\n" + id2 + " e2\n", // out of order
		"homes\n",
		"homes " + id,
		id + " e1\n", // no first line
		"",
	} {
		if s, err := parseShare([]byte(bad)); err == nil {
			t.Errorf("parseShare(%q) = %v, want an error", bad, s)
		}
	}
}

// TestSharedHomes: collection reads only the first line of a commit's
// list, which names the commits it shares with.
func TestSharedHomes(t *testing.T) {
	c := open(t, t.TempDir(), t.TempDir(), "", "")
	commit, id, id2 := strings.Repeat("c", 40), strings.Repeat("a", 40), strings.Repeat("b", 40)
	if h, err := c.sharedHomes(commit); err != nil || h != nil {
		t.Fatalf("no list: %v %v", h, err)
	}
	// A valid first line before lines collection does not read.
	if err := c.WriteSidecar(commit, sharedSuffix, []byte("homes "+id+" "+id2+"\nnot read\n")); err != nil {
		t.Fatal(err)
	}
	if h, err := c.sharedHomes(commit); err != nil || len(h) != 2 || h[0] != id || h[1] != id2 {
		t.Fatalf("homes: %v %v", h, err)
	}
	if _, err := c.Shared(commit); err == nil {
		t.Fatal("Shared read a malformed list")
	}
	// A first line that does not end within the bound is refused.
	if err := c.WriteSidecar(commit, sharedSuffix, []byte("homes "+strings.Repeat(id+" ", maxShareHomes+2)+"\n")); err != nil {
		t.Fatal(err)
	}
	if h, err := c.sharedHomes(commit); err == nil {
		t.Fatalf("an overlong first line gave %v", h)
	}
}

// FuzzParseShare: whatever parses names full commit ids and clean relative
// paths, and encodes back to what parses the same.
func FuzzParseShare(f *testing.F) {
	f.Add(encodeShare(Share{"e1": strings.Repeat("a", 40)}))
	f.Add([]byte("homes " + strings.Repeat("a", 40) + "\n" + strings.Repeat("a", 40) + " ../x\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := parseShare(b)
		if err != nil {
			return
		}
		for p, h := range s {
			if !IsCommitID(h) || strings.HasPrefix(p, "/") || strings.Contains("/"+p+"/", "/../") || p == "." {
				t.Fatalf("parsed %q -> %q", p, h)
			}
		}
		homes, err := parseHomes(strings.SplitN(string(b), "\n", 2)[0])
		if err != nil || !slices.Equal(homes, s.homes()) {
			t.Fatalf("first line of %q: %v %v, want %v", b, homes, err, s.homes())
		}
		again, err := parseShare(encodeShare(s))
		if err != nil || !maps.Equal(again, s) {
			t.Fatalf("round trip of %v: %v %v", s, again, err)
		}
	})
}

// TestNoUpdateInPlaceUnderSharedRoots: a process that handed out roots of
// a commit sharing entries with an older commit's directory never updates
// that older directory in place, even when it is the one served again (the
// ref moved back) and the process is alone with the cache.
func TestNoUpdateInPlaceUnderSharedRoots(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(map[string]string{"a/SKILL.md": "---\nname: a\ndescription: a\n---\n", "b/SKILL.md": "---\nname: b\ndescription: b\n---\n"})
	c1 := repo.Commit("first")
	bare := repo.Bare()
	root := t.TempDir()
	openAs := func(name string) *Cache {
		c, err := Open(context.Background(), Config{Root: root, Name: "share", URL: bare, Logger: testLogger(t)})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return c
	}
	// Process A serves c1 and stays: process B's update to c2 shares.
	a := openAs("A")
	if s, _, err := a.Update(context.Background(), Fetch); err != nil || s.Commit != c1 {
		t.Fatalf("A: %+v %v", s, err)
	}
	repo.Write(map[string]string{"b/SKILL.md": "---\nname: b\ndescription: changed\n---\n"})
	c2 := repo.Commit("change b")
	repo.Push(bare)
	b := openAs("B")
	defer b.Close()
	s2, _, _, err := b.UpdateSharing(context.Background(), Check, func(prev string) Share { return Share{"a": prev, "b": prev} })
	if err != nil || s2.Commit != c2 {
		t.Fatalf("B: %+v %v", s2, err)
	}
	share, err := b.Shared(c2)
	if err != nil || share["a"] != c1 {
		t.Fatalf("c2 shares %v (%v), want a with %s", share, err, c1)
	}
	a.Close()
	// The ref moves back to c1 (process C serves it again), then on.
	repo.Git("reset", "-q", "--hard", c1)
	repo.Push(bare)
	cc := openAs("C")
	if s, _, err := cc.Update(context.Background(), Check); err != nil || s.Commit != c1 {
		t.Fatalf("C: %+v %v", s, err)
	}
	cc.Close()
	repo.Write(map[string]string{"a/SKILL.md": "---\nname: a\ndescription: changed\n---\n"})
	c3 := repo.Commit("change a")
	repo.Push(bare)
	s3, _, err := b.Update(context.Background(), Check)
	if err != nil || s3.Commit != c3 {
		t.Fatalf("B again: %+v %v", s3, err)
	}
	// B's roots of c2 are as they were: a shared with c1, unchanged.
	checkSharedTree(t, repo.Dir, c2, s2.Dir, share)
	checkTree(t, repo.Dir, c3, s3.Dir)
}

// TestStaleSharedListNeverDescribesThePublishedDirectory: a list of what a
// commit's directory shares, left beside no directory by a materialization
// killed between writing it and publishing the directory, is removed by
// the next publish of that commit (when the process's start could not
// collect it), whether it updates the previous
// directory in place or materializes the commit whole beside it: the
// directory published holds its whole tree, and Shared says so.
func TestStaleSharedListNeverDescribesThePublishedDirectory(t *testing.T) {
	for _, how := range []string{"in place", "beside"} {
		t.Run(how, func(t *testing.T) {
			repo, bare := inPlaceRepo(t)
			root := t.TempDir()
			ctx := context.Background()
			s1 := fetchAndClose(t, root, bare)
			c2, _ := change(t, repo, bare)
			cfg, logs := loggedConfig(root, "inplace", bare)
			if how == "beside" {
				other, err := Open(ctx, cfg) // holds the cache, as another process would
				if err != nil {
					t.Fatal(err)
				}
				defer other.Close()
			}
			c, err := Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// Left after Open, whose collection would remove it.
			stale := filepath.Join(filepath.Dir(s1.Dir), c2+"."+sharedSuffix)
			if err := os.WriteFile(stale, encodeShare(Share{"e001": s1.Commit}), 0o644); err != nil {
				t.Fatal(err)
			}
			s2, _, err := c.Update(ctx, Check)
			if err != nil || s2.Commit != c2 {
				t.Fatalf("update: %+v %v", s2, err)
			}
			if inPlace := strings.Contains(logs.String(), "updated commit in place"); inPlace != (how == "in place") {
				t.Fatalf("test setup: updated in place %v:\n%s", inPlace, logs)
			}
			checkTree(t, repo.Dir, c2, s2.Dir)
			if share, err := c.Shared(c2); err != nil || share != nil {
				t.Errorf("the directory published shares %v (%v); it holds its whole tree", share, err)
			}
			if homes, err := c.sharedHomes(c2); err != nil || homes != nil {
				t.Errorf("the directory published shares with %v (%v)", homes, err)
			}
		})
	}
}
