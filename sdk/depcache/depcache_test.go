package depcache_test

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

func write(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// record reads the inputs of a pretend computation: a file, a directory
// and a path that does not exist.
func record(t *testing.T, dir string) []depcache.Stamp {
	t.Helper()
	var rec depcache.Recorder
	if _, err := rec.ReadFile(filepath.Join(dir, "Cargo.lock"), pkgfile.MaxLockfile); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Stat(filepath.Join(dir, "members")); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Stat(filepath.Join(dir, "absent.toml")); !os.IsNotExist(err) {
		t.Fatalf("stat of a missing file: %v", err)
	}
	rec.Observe(filepath.Join(dir, "Cargo.lock")) // recorded once only
	return rec.Stamps()
}

func TestInvalidation(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		hit    bool
	}{
		{"unchanged", func(*testing.T, string) {}, true},
		{"file rewritten with another size", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "Cargo.lock"), "v2 longer") }, false},
		{"file touched", func(t *testing.T, dir string) {
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(filepath.Join(dir, "Cargo.lock"), later, later); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"file deleted", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "Cargo.lock")) }, false},
		{"absent file appears", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "absent.toml"), "") }, false},
		{"directory gains an entry", func(t *testing.T, dir string) {
			later := time.Now().Add(time.Hour)
			write(t, filepath.Join(dir, "members", "b", "Cargo.toml"), "")
			// Make the change visible even on file systems with coarse timestamps.
			if err := os.Chtimes(filepath.Join(dir, "members"), later, later); err != nil {
				t.Fatal(err)
			}
		}, false},
		// What touch -d, git checkout of an old tree or a time-preserving
		// copy do: new content, the same size, the old modification time.
		{"file rewritten with the same size and its mtime restored", func(t *testing.T, dir string) {
			restoreMtime(t, filepath.Join(dir, "Cargo.lock"), func(path string) { write(t, path, "v9") })
		}, false},
		{"file replaced by rename with the same size and mtime", func(t *testing.T, dir string) {
			restoreMtime(t, filepath.Join(dir, "Cargo.lock"), func(path string) {
				write(t, path+".new", "v8")
				if err := os.Rename(path+".new", path); err != nil {
					t.Fatal(err)
				}
			})
		}, false},
		{"file elsewhere changes", func(t *testing.T, dir string) { write(t, filepath.Join(dir, "unrelated"), "x") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, filepath.Join(dir, "Cargo.lock"), "v1")
			write(t, filepath.Join(dir, "members", "a", "Cargo.toml"), "")
			time.Sleep(depcache.RacyWindow + 20*time.Millisecond) // settled: Store takes it
			c := depcache.New(filepath.Join(dir, "cache"))
			stamps := record(t, dir)
			if len(stamps) != 3 {
				t.Fatalf("recorded %d stamps, want 3: %+v", len(stamps), stamps)
			}
			if err := c.Store("list_deps\x00"+dir, stamps, []byte(`["answer"]`)); err != nil {
				t.Fatal(err)
			}
			tt.change(t, dir)
			v, ok := c.Load("list_deps\x00" + dir)
			if ok != tt.hit {
				t.Fatalf("Load hit = %v, want %v", ok, tt.hit)
			}
			if ok && string(v) != `["answer"]` {
				t.Fatalf("Load = %q", v)
			}
		})
	}
}

// restoreMtime runs change on path and then sets path's modification time
// back to what it was, so only the change time and identity tell.
func restoreMtime(t *testing.T, path string, change func(path string)) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	change(path)
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("could not restore size and mtime: %v %v -> %v %v", fi.Size(), fi.ModTime(), after.Size(), after.ModTime())
	}
}

func TestMisses(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "in"), "x")
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	c := depcache.New(filepath.Join(dir, "cache"))
	if _, ok := c.Load("k"); ok {
		t.Fatal("an empty cache hit")
	}
	if err := c.Store("k", []depcache.Stamp{depcache.Take(filepath.Join(dir, "in"))}, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Load("other"); ok {
		t.Fatal("another key hit")
	}
	// Corrupt every entry in place: each is a miss, never an error or panic.
	entries, _ := filepath.Glob(filepath.Join(dir, "cache", "*"))
	if len(entries) == 1 && !strings.HasSuffix(entries[0], ".cache") {
		t.Errorf("entry %s does not end in .cache", entries[0])
	}
	if len(entries) != 1 {
		t.Fatalf("cache holds %v, want one entry and no temporary file", entries)
	}
	for _, garbage := range []string{"", "symposium-depcache 3 1\n", "symposium-depcache 3 1\n\"k\"\n1 2 3 4:5 x \"p\"\n\nv", "symposium-depcache 3 1\n\"k\"\n1 2 3 45 f \"p\"\n\nv", "symposium-depcache 2\n\"k\"\n\nv", "symposium-depcache 3 x\n\"k\"\n\nv", "symposium-depcache 3 2\n\"k\"\n\nv", "symposium-depcache 3 0\n\"k\"\n\nv"} {
		write(t, entries[0], garbage)
		if v, ok := c.Load("k"); ok {
			t.Errorf("corrupt entry %q hit with %q", garbage, v)
		}
	}
	// The cache directory deleted between calls is a miss, and the next
	// store recreates it.
	os.RemoveAll(filepath.Join(dir, "cache"))
	if _, ok := c.Load("k"); ok {
		t.Fatal("a deleted cache hit")
	}
	if err := c.Store("k", nil, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, ok := c.Load("k"); !ok || string(v) != "v" {
		t.Fatalf("Load after re-store = %q, %v", v, ok)
	}
	// Disabled caches store nothing.
	var nilCache *depcache.Cache
	for _, off := range []*depcache.Cache{nilCache, depcache.New("")} {
		if err := off.Store("k", nil, []byte("v")); err != nil {
			t.Fatal(err)
		}
		if _, ok := off.Load("k"); ok {
			t.Fatal("a disabled cache hit")
		}
	}
}

func TestStoreFailureNamesTheCause(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "file"), "")
	err := depcache.New(filepath.Join(dir, "file", "cache")).Store("k", nil, nil)
	if err == nil || !strings.Contains(err.Error(), "file") {
		t.Fatalf("Store under a regular file: %v", err)
	}
}

func TestConcurrentStoresLeaveWholeEntries(t *testing.T) {
	dir := t.TempDir()
	c := depcache.New(dir)
	values := [][]byte{bytes.Repeat([]byte("a"), 1<<16), bytes.Repeat([]byte("b"), 1<<10)}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				if err := c.Store("k", nil, values[i%2]); err != nil {
					t.Error(err)
				}
				if v, ok := c.Load("k"); ok && !bytes.Equal(v, values[0]) && !bytes.Equal(v, values[1]) {
					t.Errorf("read a torn value of %d bytes", len(v))
				}
			}
		})
	}
	wg.Wait()
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
}

func TestEncodeDecode(t *testing.T) {
	tests := []depcache.Entry{
		{Key: "list_deps\x00/w", Value: []byte{}},
		{Key: "k", Stamps: []depcache.Stamp{
			{Path: "/a b/Cargo.toml", Size: 12, Mod: 1700000000123456789, Change: 1700000000223456789, Dev: 2049, Ino: 1<<63 + 7},
			{Path: "/new\nline\t\"quoted\" \xff", Size: -1},
			{Path: "/dir", Mod: -5, Dir: true},
		}, Value: []byte("line one\nline two\n\n")},
	}
	for _, e := range tests {
		got, err := depcache.Decode(e.Encode())
		if err != nil {
			t.Fatalf("Decode(Encode(%+v)): %v", e, err)
		}
		if !reflect.DeepEqual(got, e) {
			t.Errorf("round trip:\n got %+v\nwant %+v", got, e)
		}
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(depcache.Entry{Key: "k", Stamps: []depcache.Stamp{{Path: "/p", Size: 3, Mod: 4}, {Path: "/d", Dir: true}}, Value: []byte("[]")}.Encode())
	f.Add([]byte("symposium-depcache 3 0\n\"k\"\n-1 0 0 0:0 f \"\\x00\"\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := depcache.Decode(data)
		if err != nil {
			return
		}
		again, err := depcache.Decode(e.Encode())
		if err != nil {
			t.Fatalf("re-encoded entry does not decode: %v", err)
		}
		if again.Key != e.Key || !reflect.DeepEqual(again.Stamps, e.Stamps) || !bytes.Equal(again.Value, e.Value) {
			t.Fatalf("round trip changed the entry:\n%+v\n%+v", e, again)
		}
	})
}

func TestDeps(t *testing.T) {
	deps := []protocol.PackageID{{PM: "cargo", Name: "serde", Version: "1.0.1"}, {PM: "cargo", Name: "@scope/x", Version: "*"}}
	b, ok := depcache.AppendDeps([]byte("head\n"), deps)
	if !ok || string(b) != "head\nserde 1.0.1\n@scope/x *\n" {
		t.Fatalf("AppendDeps = %q, %v", b, ok)
	}
	got, err := depcache.ParseDeps(b[len("head\n"):], "cargo")
	if err != nil || !reflect.DeepEqual(got, deps) {
		t.Fatalf("ParseDeps = %v, %v", got, err)
	}
	if got, err := depcache.ParseDeps(nil, "npm"); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("ParseDeps(nil) = %#v, %v", got, err)
	}
	for _, bad := range []protocol.PackageID{{Name: "a b", Version: "1"}, {Name: "a", Version: "1\n2"}, {Name: "", Version: "1"}, {Name: "a", Version: "1\r"}} {
		if b, ok := depcache.AppendDeps([]byte("x"), []protocol.PackageID{deps[0], bad}); ok || string(b) != "x" {
			t.Errorf("AppendDeps(%+v) = %q, %v; want refused and b unchanged", bad, b, ok)
		}
	}
	for _, bad := range []string{"noversion\n", " 1.0\n", "a 1 2\n"} {
		if _, err := depcache.ParseDeps([]byte(bad), "npm"); err == nil {
			t.Errorf("ParseDeps(%q) succeeded", bad)
		}
	}
}

func FuzzParseDeps(f *testing.F) {
	f.Add([]byte("serde 1.0.1\n@scope/x *\n"))
	f.Add([]byte("a 1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		deps, err := depcache.ParseDeps(data, "pm")
		if err != nil {
			return
		}
		b, ok := depcache.AppendDeps(nil, deps)
		if !ok {
			t.Fatalf("parsed deps %q do not re-encode", deps)
		}
		again, err := depcache.ParseDeps(b, "pm")
		if err != nil || !reflect.DeepEqual(again, deps) {
			t.Fatalf("round trip: %v, %v", again, err)
		}
	})
}
