package gitregistry

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// derivedRegistry is a registry of plugins and bare skills with no
// symbolic links, for updates whose index is derived.
func derivedRegistry(t *testing.T) (*gittest.Repo, string) {
	repo := gittest.NewRepo(t)
	files := map[string]string{"README.md": "registry\n"}
	for i := range 40 {
		files[fmt.Sprintf("plugins/p%02d/SYMPOSIUM.toml", i)] = fmt.Sprintf("name = \"plugin-%02d\"\n\n[[skills]]\nsource.path = \"skills\"\n", i)
		files[fmt.Sprintf("plugins/p%02d/skills/s/SKILL.md", i)] = "---\nname: s\ndescription: inner skill\n---\n"
		files[fmt.Sprintf("groups/g%d/skill-%02d/SKILL.md", i%4, i)] = fmt.Sprintf("---\nname: skill-%02d\ndescription: Skill %d\n---\n", i, i)
	}
	repo.Write(files)
	repo.Commit("registry")
	return repo, repo.Bare()
}

// refreshed runs a refresh in a process of its own (a fresh PM, closed
// after) and returns its log.
func refreshed(t *testing.T, bare, cache string) string {
	t.Helper()
	p, logs := newPM(t, Config{URL: bare}, cache, nil)
	if changed, err := p.Refresh(context.Background(), protocol.UpdateCheck, false); err != nil || !changed {
		t.Fatalf("refresh: %v %v\n%s", changed, err, logs)
	}
	p.Close()
	return logs.String()
}

// TestRefreshDerivesIndex is issue 19 item 3: after a refresh that moves
// the registry by a one-entry change, the first hook does not build the
// index (the refresh derived it from the previous commit's, reading only
// the changed entry), and what the hook answers, searches and loads is
// what an index built from the new commit's tree gives. That holds too when
// a SKILL.md or SYMPOSIUM.toml turns from a directory into a file (its
// parent becomes an entry) or from a file into a directory (its parent is
// no longer one, and what the directory holds may be).
func TestRefreshDerivesIndex(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		// before, when set, changes the registry before the first refresh.
		before func(*gittest.Repo)
		change func(*gittest.Repo)
		read   int
	}{
		{"skill edited", nil, func(r *gittest.Repo) {
			r.Write(map[string]string{"groups/g1/skill-05/SKILL.md": "---\nname: skill-05\ndescription: Changed\n---\n"})
		}, 1},
		{"skill inside a plugin edited", nil, func(r *gittest.Repo) {
			r.Write(map[string]string{"plugins/p07/skills/s/SKILL.md": "---\nname: s\ndescription: now findable\n---\n"})
		}, 1},
		{"entry added", nil, func(r *gittest.Repo) {
			r.Write(map[string]string{"groups/g9/new/SKILL.md": "---\nname: new\ndescription: New\n---\n"})
		}, 1},
		{"entry removed", nil, func(r *gittest.Repo) { r.Remove("plugins/p03") }, 0},
		{"plugin made unreadable", nil, func(r *gittest.Repo) {
			r.Write(map[string]string{"plugins/p11/SYMPOSIUM.toml": "name = \n"})
		}, 1},
		{"SKILL.md directory becomes a file", func(r *gittest.Repo) {
			r.Write(map[string]string{"groups/g0/odd/SKILL.md/README": "a directory named SKILL.md\n"})
		}, func(r *gittest.Repo) {
			r.Remove("groups/g0/odd/SKILL.md")
			r.Write(map[string]string{"groups/g0/odd/SKILL.md": "---\nname: odd\ndescription: now a skill\n---\n"})
		}, 1},
		{"SYMPOSIUM.toml directory becomes a file", func(r *gittest.Repo) {
			r.Write(map[string]string{"plugins/odd/SYMPOSIUM.toml/README": "a directory named SYMPOSIUM.toml\n"})
		}, func(r *gittest.Repo) {
			r.Remove("plugins/odd/SYMPOSIUM.toml")
			r.Write(map[string]string{"plugins/odd/SYMPOSIUM.toml": "name = \"odd\"\n"})
		}, 1},
		{"SKILL.md file becomes a directory", nil, func(r *gittest.Repo) {
			r.Remove("groups/g1/skill-05/SKILL.md")
			r.Write(map[string]string{"groups/g1/skill-05/SKILL.md/SKILL.md": "---\nname: inner\ndescription: one level down\n---\n"})
		}, 1},
		{"SYMPOSIUM.toml file becomes a directory", nil, func(r *gittest.Repo) {
			r.Remove("plugins/p05/SYMPOSIUM.toml")
			r.Write(map[string]string{"plugins/p05/SYMPOSIUM.toml/README": "no longer a manifest\n"})
		}, 1}, // the skill group plugins/p05/skills/s becomes a bare skill
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own registry, cache and PMs
			repo, bare := derivedRegistry(t)
			if tc.before != nil {
				tc.before(repo)
				repo.Commit("before")
				repo.Push(bare)
			}
			cache := t.TempDir()
			if logs := refreshed(t, bare, cache); !strings.Contains(logs, "built registry index") {
				t.Fatalf("the first refresh did not build the index:\n%s", logs)
			}
			tc.change(repo)
			repo.Commit("change")
			repo.Push(bare)
			logs := refreshed(t, bare, cache)
			if !strings.Contains(logs, "derived registry index") || !strings.Contains(logs, fmt.Sprintf("entries_read=%d\n", tc.read)) {
				t.Fatalf("the refresh did not derive the index reading %d entries:\n%s", tc.read, logs)
			}

			hook, hookLogs := newPM(t, Config{URL: bare}, cache, nil)
			offers, err := hook.ActivePlugins(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(hookLogs.String(), "built registry index") {
				t.Fatalf("the first hook after the refresh built the index:\n%s", hookLogs)
			}
			c, snap, _, err := hook.current(ctx)
			if err != nil {
				t.Fatal(err)
			}
			snap, got := hook.snapshotIndex(ctx, c, snap)
			want := buildIndex(snap.Dir, snap.Commit)
			if !reflect.DeepEqual(got.Entries, want.Entries) {
				t.Fatalf("derived index %s\nbuilt from the tree %s", showEntries(got), showEntries(want))
			}
			if wantOffers := hook.offers(snap, want); !reflect.DeepEqual(offers, wantOffers) {
				t.Errorf("active_plugins answered %d offers, unlike an index built from the tree (%d)", len(offers), len(wantOffers))
			}
			hits, err := hook.Search(ctx, "findable")
			if tc.name == "skill inside a plugin edited" && (err != nil || len(hits) != 1 || hits[0].ID.Name != "plugins/p07") {
				t.Errorf("search for the changed skill: %v %v", hits, err)
			}
		})
	}
}

// TestRefreshBuildsWhenItCannotDerive: when the previous commit's index is
// damaged, or its tree holds symbolic links, the refresh builds the new
// commit's index from the tree instead of deriving it, and the first hook
// still does not build it.
func TestRefreshBuildsWhenItCannotDerive(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, repo *gittest.Repo, cache string)
	}{
		{"damaged previous index", func(t *testing.T, repo *gittest.Repo, cache string) {
			for _, p := range indexPaths(t, cache) {
				b, _ := os.ReadFile(p)
				b[len(b)/2] ^= 1
				os.WriteFile(p, b, 0o644)
			}
		}},
		{"symbolic link in the tree", func(t *testing.T, repo *gittest.Repo, cache string) {}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // each case has its own registry, cache and PMs
			repo, bare := derivedRegistry(t)
			if strings.Contains(tc.name, "symbolic") {
				repo.Write(map[string]string{"plugins/p01/link.md": "->../../README.md"})
				repo.Commit("link")
				repo.Push(bare)
			}
			cache := t.TempDir()
			refreshed(t, bare, cache)
			tc.setup(t, repo, cache)
			repo.Write(map[string]string{"groups/g1/skill-05/SKILL.md": "---\nname: skill-05\ndescription: Changed\n---\n"})
			repo.Commit("change")
			repo.Push(bare)
			if logs := refreshed(t, bare, cache); strings.Contains(logs, "derived registry index") || !strings.Contains(logs, "built registry index") {
				t.Fatalf("the refresh derived the index, or did not build it:\n%s", logs)
			}
			hook, hookLogs := newPM(t, Config{URL: bare}, cache, nil)
			if _, err := hook.ActivePlugins(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(hookLogs.String(), "built registry index") {
				t.Fatalf("the first hook after the refresh built the index:\n%s", hookLogs)
			}
			c, snap, _, _ := hook.current(ctx)
			snap, got := hook.snapshotIndex(ctx, c, snap)
			if want := buildIndex(snap.Dir, snap.Commit); !reflect.DeepEqual(got.Entries, want.Entries) {
				t.Fatalf("index %s\nbuilt from the tree %s", showEntries(got), showEntries(want))
			}
		})
	}
}

// indexPaths lists the persisted indexes below cache.
func indexPaths(t *testing.T, cache string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, "."+indexSuffix) {
			out = append(out, p)
		}
		return nil
	})
	if len(out) == 0 {
		t.Fatalf("no persisted index below %s", cache)
	}
	return out
}
