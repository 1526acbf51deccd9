package depcache_test

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
)

// sharedReadCache returns a cache in dir/cache, its entries' one input
// (dir/Cargo.lock, settled past depcache.RacyWindow), and store, which
// stores "value of KEY" under key, stamped on that input.
func sharedReadCache(t *testing.T) (dir, input string, c *depcache.Cache, store func(key string)) {
	t.Helper()
	dir = t.TempDir()
	input = filepath.Join(dir, "Cargo.lock")
	write(t, input, "v1")
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	c = depcache.New(filepath.Join(dir, "cache"))
	store = func(key string) {
		t.Helper()
		var rec depcache.Recorder
		rec.Observe(input)
		if err := c.Store(key, rec.Stamps(), []byte("value of "+key)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, input, c, store
}

// TestSharedRead: requests sharing a SharedRead read an entry once while
// the read is fresh (here: the entry's file removed after the first read
// is not noticed), in flight or done; Forget (called after storing) and
// the end of depcache.VerifiedWindow make the next Load read the entry
// again; another key is read on its own.
func TestSharedRead(t *testing.T) {
	dir, _, c, store := sharedReadCache(t)
	// drop removes every entry; a shared read fresh in the window still
	// serves a, a new read misses.
	drop := func() {
		t.Helper()
		files, _ := filepath.Glob(filepath.Join(dir, "cache", "*"))
		for _, f := range files {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	store("a")
	store("b")
	var s depcache.SharedRead
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if v, ok := s.Load(c, "a"); !ok || string(v) != "value of a" {
				t.Errorf("Load(a) = %q, %v", v, ok)
			}
		})
	}
	wg.Wait()
	drop()
	if v, ok := s.Load(c, "a"); !ok || string(v) != "value of a" {
		t.Fatalf("within the window the entry was read again: Load(a) = %q, %v", v, ok)
	}
	store("b")
	if v, ok := s.Load(c, "b"); !ok || string(v) != "value of b" {
		t.Fatalf("Load(b) = %q, %v", v, ok)
	}
	s.Forget()
	drop()
	if _, ok := s.Load(c, "a"); ok {
		t.Fatal("after Forget the last read was still served")
	}
	store("a")
	s.Forget()
	if _, ok := s.Load(c, "a"); !ok {
		t.Fatal("Load(a) missed a stored entry")
	}
	drop()
	time.Sleep(depcache.VerifiedWindow + 50*time.Millisecond)
	if _, ok := s.Load(c, "a"); ok {
		t.Fatalf("past %v the last read was still served", depcache.VerifiedWindow)
	}
}

// TestSharedReadMiss: a read that missed is shared as a hit is. An entry
// absent at the first Load still misses within the window after it is
// stored behind the SharedRead's back, until Forget; so does a stale entry
// read by several Loads at once and then stored fresh: they shared one
// read; past depcache.VerifiedWindow the entry is read again.
func TestSharedReadMiss(t *testing.T) {
	_, input, c, store := sharedReadCache(t)

	var s depcache.SharedRead
	if _, ok := s.Load(c, "a"); ok {
		t.Fatal("Load(a) of an absent entry hit")
	}
	store("a")
	if _, ok := s.Load(c, "a"); ok {
		t.Fatal("within the window the absent entry was read again")
	}
	s.Forget()
	if v, ok := s.Load(c, "a"); !ok || string(v) != "value of a" {
		t.Fatalf("after Forget: Load(a) = %q, %v", v, ok)
	}

	store("b")
	write(t, input, "v2, longer") // b is stale from now on
	s.Forget()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, ok := s.Load(c, "b"); ok {
				t.Error("Load(b) of a stale entry hit")
			}
		})
	}
	wg.Wait()
	// v2 settled, b is stored fresh again, behind the SharedRead's back.
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	store("b")
	if _, ok := s.Load(c, "b"); ok {
		t.Fatal("within the window the stale entry was read again instead of its miss shared")
	}
	time.Sleep(depcache.VerifiedWindow + 50*time.Millisecond)
	if _, ok := s.Load(c, "b"); !ok {
		t.Fatalf("past %v a stored entry still missed", depcache.VerifiedWindow)
	}
}
