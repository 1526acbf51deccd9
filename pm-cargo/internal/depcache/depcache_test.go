package depcache

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestStoreLoad(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "input")
	os.WriteFile(in, []byte("a"), 0o644)
	absent := filepath.Join(dir, "absent")
	var rec Recorder
	rec.Observe(in)
	rec.Observe(absent)
	rec.Observe(in)
	if len(rec.Stamps()) != 2 || rec.Stamps()[1].Size != -1 {
		t.Fatalf("stamps = %+v", rec.Stamps())
	}
	c := New(filepath.Join(dir, "cache"))
	if err := c.Store("k", rec.Stamps(), []string{"v"}); err != nil {
		t.Fatal(err)
	}
	load := func() (string, bool) {
		raw, ok := c.Load("k")
		var v []string
		json.Unmarshal(raw, &v)
		if len(v) == 0 {
			return "", ok
		}
		return v[0], ok
	}
	if v, ok := load(); !ok || v != "v" {
		t.Fatalf("hit = %q %v", v, ok)
	}
	if _, ok := c.Load("other"); ok {
		t.Error("hit for another key")
	}
	os.WriteFile(absent, nil, 0o644)
	if _, ok := load(); ok {
		t.Error("hit after an absent input appeared")
	}
	os.Remove(absent)
	later := time.Now().Add(time.Hour)
	os.Chtimes(in, later, later)
	if _, ok := load(); ok {
		t.Error("hit after the input's mtime changed")
	}
	// Garbage entries are misses, and nothing is left behind by Store.
	entries, _ := os.ReadDir(filepath.Join(dir, "cache"))
	if len(entries) != 1 {
		t.Errorf("cache dir has %d entries, want 1", len(entries))
	}
	os.WriteFile(filepath.Join(dir, "cache", entries[0].Name()), []byte("{"), 0o644)
	if _, ok := load(); ok {
		t.Error("hit on a corrupt entry")
	}
	var nilCache *Cache
	if _, ok := nilCache.Load("k"); ok || nilCache.Store("k", nil, 1) != nil {
		t.Error("nil cache must be a no-op")
	}
}
