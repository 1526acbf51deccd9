package gitcache

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-gitregistry/internal/gittest"
)

// BenchmarkRefreshOneChange measures an update after a one-entry change to
// a registry of 1,000 and 10,000 entries (issue 19 item 3), beside the
// same change taken by git itself with `git fetch` and `git checkout` in a
// clone with a work tree (target: gitcache ≤ 2× git-fetch-checkout). Each
// iteration commits and pushes one change outside the timer. "gitcache" is
// a refresh process (open, update in place, close);
// "gitcache-roots-in-use" an update in a process whose roots of the
// previous commit must stay valid.
//
//	go test -run '^$' -bench RefreshOneChange -benchtime 3x ./internal/gitcache
func BenchmarkRefreshOneChange(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		repo := gittest.NewRepo(b)
		files := map[string]string{}
		for i := range n {
			files[fmt.Sprintf("g%02d/s%05d/SKILL.md", i%50, i)] = fmt.Sprintf("---\nname: s%05d\ndescription: Skill number %d\n---\nBody of skill %d.\n", i, i, i)
		}
		repo.Write(files)
		repo.Commit("registry")
		bare := repo.Bare()
		change := 0
		push := func() {
			change++
			repo.Write(map[string]string{"g00/s00000/SKILL.md": fmt.Sprintf("---\nname: s00000\ndescription: Changed %d\n---\n", change)})
			repo.Commit("change")
			repo.Push(bare)
		}

		b.Run(fmt.Sprintf("entries=%d/gitcache", n), func(b *testing.B) {
			// A refresh as the host runs it: a process opens the cache,
			// updates it and exits, having handed out no root of the
			// previous commit, so the update happens in place.
			cfg := Config{Root: b.TempDir(), Name: "bench", URL: bare}
			c, err := Open(context.Background(), cfg)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := c.Update(context.Background(), Check); err != nil {
				b.Fatal(err)
			}
			c.Close()
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				push()
				b.StartTimer()
				c, err := Open(context.Background(), cfg)
				if err != nil {
					b.Fatal(err)
				}
				if _, changed, err := c.Update(context.Background(), Check); err != nil || !changed {
					b.Fatalf("update: %v %v", changed, err)
				}
				c.Close()
			}
		})
		// The entries' directories, as the registry shares them: each
		// with the commit whose directory holds it.
		entries := func(c *Cache) func(prev string) Share {
			return func(prev string) Share {
				held, err := c.Shared(prev)
				if err != nil {
					b.Fatal(err)
				}
				s := make(Share, n)
				for i := range n {
					p, home := fmt.Sprintf("g%02d/s%05d", i%50, i), prev
					if h, ok := held[p]; ok {
						home = h
					}
					s[p] = home
				}
				return s
			}
		}
		for _, shared := range []bool{true, false} {
			name := "gitcache-roots-in-use"
			if !shared {
				name += "-whole"
			}
			b.Run(fmt.Sprintf("entries=%d/%s", n, name), func(b *testing.B) {
				// A refresh in a process that handed out roots of the
				// commit it served: that commit's directory stays, and the
				// new one is materialized beside it, leaving out the
				// entries that did not change (shared) or linking their
				// files (whole).
				c, err := Open(context.Background(), Config{Root: b.TempDir(), Name: "bench", URL: bare})
				if err != nil {
					b.Fatal(err)
				}
				defer c.Close()
				if _, _, err := c.Update(context.Background(), Check); err != nil {
					b.Fatal(err)
				}
				var share func(string) Share
				if shared {
					share = entries(c)
				}
				b.ResetTimer()
				for range b.N {
					b.StopTimer()
					push()
					b.StartTimer()
					if _, changed, _, err := c.UpdateSharing(context.Background(), Check, share); err != nil || !changed {
						b.Fatalf("update: %v %v", changed, err)
					}
				}
			})
		}
		b.Run(fmt.Sprintf("entries=%d/git-fetch-checkout", n), func(b *testing.B) {
			clone := filepath.Join(b.TempDir(), "clone")
			gittest.Run(b, filepath.Dir(clone), "clone", "-q", bare, clone)
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				push()
				b.StartTimer()
				gittest.FetchCheckout(b, clone)
			}
		})
	}
}
