package gitregistry

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestRefreshDoesNotCarryDamage: a refresh that would turn the previous
// commit's directory into the new one (nothing else uses the cache) first
// checks it against the stamps of its persisted index; an entry directory
// deleted behind the cache's back is not carried into the new commit, which
// is materialized from the repository instead.
func TestRefreshDoesNotCarryDamage(t *testing.T) {
	repo := gittest.NewRepo(t)
	repo.Write(map[string]string{
		"alpha/SKILL.md":       "---\nname: alpha\ndescription: A\n---\n",
		"beta/SYMPOSIUM.toml":  "name = \"beta\"\n",
		"group/gamma/SKILL.md": "---\nname: gamma\ndescription: G\n---\n",
		"group/delta/SKILL.md": "---\nname: delta\ndescription: D\n---\n",
		"README.md":            "registry\n",
	})
	repo.Commit("registry")
	bare := repo.Bare()
	want := []string{"alpha", "beta", "group/delta", "group/gamma"}
	ctx := context.Background()
	for _, gone := range []string{"beta", "group/gamma"} {
		t.Run(gone, func(t *testing.T) {
			cache := t.TempDir()
			p, _ := newPM(t, Config{URL: bare}, cache, nil)
			if _, err := p.Refresh(ctx, protocol.UpdateCheck, false); err != nil {
				t.Fatal(err)
			}
			offers, err := p.ActivePlugins(ctx, nil)
			if err != nil || !slices.Equal(offerNames(offers), want) {
				t.Fatalf("first: %v %v", offerNames(offers), err)
			}
			p.Close()
			root := offers[slices.Index(offerNames(offers), gone)].Root
			if err := os.RemoveAll(root); err != nil {
				t.Fatal(err)
			}
			repo.Write(map[string]string{"README.md": "changed " + gone + "\n"})
			repo.Commit("change")
			repo.Push(bare)

			q, _ := newPM(t, Config{URL: bare}, cache, nil)
			if changed, err := q.Refresh(ctx, protocol.UpdateCheck, false); err != nil || !changed {
				t.Fatalf("refresh: %v %v", changed, err)
			}
			again, err := q.ActivePlugins(ctx, nil)
			if err != nil || !slices.Equal(offerNames(again), want) {
				t.Fatalf("after a refresh over a damaged commit: %v %v, want %v", offerNames(again), err, want)
			}
			for _, o := range again {
				if _, err := os.Stat(o.Root); err != nil {
					t.Errorf("%s: %v", o.ID.Name, err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(filepath.Dir(again[0].Root), "README.md")); err != nil || string(b) != "changed "+gone+"\n" {
				t.Errorf("README.md of the new commit: %q %v", b, err)
			}
		})
	}
}
