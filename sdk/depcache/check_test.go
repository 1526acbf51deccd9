package depcache

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// FuzzLoad: whatever an entry file holds, the loads parsing it in place
// never panic, miss whatever Decode refuses, and hit only an entry that
// Decode reads as holding their key, every input of which is unchanged.
func FuzzLoad(f *testing.F) {
	dir := f.TempDir()
	pkg := filepath.Join(dir, "node_modules", "a")
	if err := os.MkdirAll(filepath.Join(pkg, "skills"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte("{}"), 0o644); err != nil {
		f.Fatal(err)
	}
	stamps := []Stamp{Take(pkg), Take(filepath.Join(pkg, "package.json")), Take(filepath.Join(pkg, "skills")), Take(filepath.Join(pkg, "absent"))}
	f.Add(Entry{Key: "k", Stamps: stamps, Value: []byte(`[{"root":` + strconv.Quote(pkg) + `}]`)}.Encode())
	f.Add(Entry{Key: "k", Stamps: stamps[1:], Value: []byte(`[{"root":` + strconv.Quote(pkg) + `}]`)}.Encode())
	f.Add(Entry{Key: "k", Value: []byte("[]")}.Encode())
	f.Add(Entry{Key: "other", Stamps: stamps, Value: []byte("x")}.Encode())
	f.Add([]byte("symposium-depcache 3 2\n\"k\"\n0 0 0 0:0 d \"/\"\n\n[]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c := New(t.TempDir())
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.file("k"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := Decode(data)
		usable := err == nil && e.Key == "k"
		if usable {
			for _, s := range e.Stamps {
				if Take(s.Path) != s {
					usable = false
				}
			}
		}
		_, hit := c.Load("k")
		_, offersHit := c.LoadOffers("k", nil)
		_, rawHit := c.LoadRawOffers("k", nil)
		if (hit || offersHit || rawHit) && !usable {
			t.Fatalf("a load hit (Load %v, LoadOffers %v, LoadRawOffers %v) an entry Decode reads as %+v, %v", hit, offersHit, rawHit, e, err)
		}
		if usable && !hit {
			t.Fatalf("Load missed a usable entry %+v", e)
		}
	})
}

// TestLoadFIFOEntry: a FIFO in an entry's place is a miss at once (it
// was opened with os.ReadFile and waited for a writer forever), and so is
// an entry over MaxEntry, refused before it is read.
func TestLoadFIFOEntry(t *testing.T) {
	c := New(t.TempDir())
	if err := syscall.Mkfifo(c.file("fifo"), 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := os.WriteFile(c.file("big"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(c.file("big"), MaxEntry+1); err != nil { // sparse: no disk space
		t.Fatal(err)
	}
	for _, key := range []string{"fifo", "big"} {
		done := make(chan bool, 1)
		go func() {
			_, ok := c.Load(key)
			done <- ok
		}()
		select {
		case ok := <-done:
			if ok {
				t.Errorf("%s: Load hit", key)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Load still blocked after 5 s", key)
		}
		if _, _, err := c.readEntry(key, entryCheck{}); err == nil || !strings.Contains(err.Error(), c.file(key)) {
			t.Errorf("%s: readEntry: %v, want an error naming the entry", key, err)
		}
	}
}
