package verifiedtree

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/depcache"
)

// TestScopeKey: the key names the sources, not their credentials, the case
// of their host or a trailing slash; the order of the sources and every
// other part of a URL count.
func TestScopeKey(t *testing.T) {
	base := ScopeKey("https://corp.example/simple")
	if len(base) != 32 || strings.Trim(base, "0123456789abcdef") != "" {
		t.Fatalf("key %q: not 32 hex digits", base)
	}
	for _, same := range []string{
		"https://user:token@corp.example/simple",
		"https://CORP.example/simple/",
		"https://token@corp.example/simple//",
	} {
		if got := ScopeKey(same); got != base {
			t.Errorf("ScopeKey(%q) = %s, want %s", same, got, base)
		}
	}
	for _, other := range [][]string{
		{"https://corp.example/other"},
		{"http://corp.example/simple"},
		{"https://corp.example:8443/simple"},
		{"https://corp.example/simple", "https://pypi.org/simple"},
		{},
	} {
		if got := ScopeKey(other...); got == base {
			t.Errorf("ScopeKey(%q) = the key of another scope", other)
		}
	}
	if ScopeKey("https://a.example", "https://b.example") == ScopeKey("https://b.example", "https://a.example") {
		t.Error("the order of the sources does not count")
	}
	if ScopeKey("https://a.example\nhttps://b.example") == ScopeKey("https://a.example", "https://b.example") {
		t.Error("one URL holding a newline is taken for two")
	}
	if strings.Contains(ScopeKey("https://user:secret@corp.example/"), "secret") {
		t.Error("the key holds the credentials")
	}
}

func TestParse(t *testing.T) {
	for in, want := range map[string]string{
		"sha512-0a1b\n":    "sha512-0a1b",
		"  " + hex64 + " ": hex64,
	} {
		if got, ok := Parse([]byte(in)); !ok || got != want {
			t.Errorf("Parse(%q) = %q %v, want %q", in, got, ok, want)
		}
	}
	for _, in := range []string{
		"", "\n", ".", "..", "../x", "a/b", `a\b`, "-rf", ".hidden", "ABC", "a b", "a\x00", "a\nb",
		strings.Repeat("a", MaxPointer+1),
	} {
		if got, ok := Parse([]byte(in)); ok {
			t.Errorf("Parse(%q) = %q, accepted", in, got)
		}
	}
}

const hex64 = "5baccc0d7d656da45688dff24504ca7a3be9c66e0eb0e0827e731731a4d40ed4"

func isHex64(s string) bool { return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == "" }

// TestWriteLookup: a digest written is looked up, once its tree exists and
// when the PM's check accepts it; writing the same digest again writes
// nothing; a digest that cannot name a directory is refused with an error
// naming the pointer.
func TestWriteLookup(t *testing.T) {
	dir := t.TempDir()
	ptr := "index-" + ScopeKey("https://corp.example/simple")
	if tree, ok := Lookup(nil, dir, ptr, isHex64); ok {
		t.Fatalf("no pointer: %s", tree)
	}
	if wrote, err := Write(dir, ptr, hex64); err != nil || !wrote {
		t.Fatalf("Write: %v %v", wrote, err)
	}
	if tree, ok := Lookup(nil, dir, ptr, isHex64); ok {
		t.Errorf("a pointer naming no tree: %s", tree)
	}
	os.Mkdir(filepath.Join(dir, hex64), 0o755)
	if tree, ok := Lookup(nil, dir, ptr, isHex64); !ok || tree != filepath.Join(dir, hex64) {
		t.Errorf("Lookup = %q %v", tree, ok)
	}
	if tree, ok := Lookup(nil, dir, ptr, func(string) bool { return false }); ok {
		t.Errorf("a digest the PM refuses: %s", tree)
	}
	if tree, ok := Lookup(nil, dir, "index-other", isHex64); ok {
		t.Errorf("another scope's pointer: %s", tree)
	}
	if wrote, err := Write(dir, ptr, hex64); err != nil || wrote {
		t.Errorf("Write of the same digest: %v %v", wrote, err)
	}
	for _, bad := range []string{"../escape", "", "a\n"} {
		_, err := Write(dir, ptr, bad)
		if !errors.Is(err, ErrInvalidDigest) || !strings.Contains(err.Error(), filepath.Join(dir, ptr)) {
			t.Errorf("Write(%q): %v", bad, err)
		}
	}
	if _, err := Write(filepath.Join(dir, "missing"), ptr, hex64); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "missing")) {
		t.Errorf("Write into a missing directory: %v", err)
	}
	// A pointer that is a link out of dir is not followed.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "p"), []byte(hex64+"\n"), 0o644)
	os.Symlink(filepath.Join(outside, "p"), filepath.Join(dir, "index-link"))
	if tree, ok := Lookup(nil, dir, "index-link", isHex64); ok {
		t.Errorf("a pointer linking out of its directory: %s", tree)
	}
}

// TestLookupRecorded: what Lookup read is recorded, so that an answer
// derived from it is stale once the pointer is written, whether it existed
// or not.
func TestLookupRecorded(t *testing.T) {
	dir := t.TempDir()
	ptr := "registry-" + ScopeKey("https://registry.example/")
	other := strings.Repeat("b", 64)
	os.Mkdir(filepath.Join(dir, hex64), 0o755)
	os.Mkdir(filepath.Join(dir, other), 0o755)
	stale := func(write string) bool {
		t.Helper()
		var rec depcache.Recorder
		Lookup(&rec, dir, ptr, isHex64)
		stamps := rec.Stamps()
		if len(stamps) == 0 {
			t.Fatal("nothing recorded")
		}
		time.Sleep(10 * time.Millisecond) // a later modification time
		if _, err := Write(dir, ptr, write); err != nil {
			t.Fatal(err)
		}
		for _, s := range stamps {
			if !s.Fresh() {
				return true
			}
		}
		return false
	}
	if !stale(hex64) {
		t.Error("an absent pointer written: the answer stays valid")
	}
	if !stale(other) {
		t.Error("a pointer moved to another tree: the answer stays valid")
	}
}

// FuzzParse: whatever Parse accepts is one path element naming an entry
// of the directory it is joined to, and reads back as itself once written.
func FuzzParse(f *testing.F) {
	for _, s := range []string{hex64, "sha512-ab\n", "..", "a/b", " x ", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, ok := Parse(data)
		if !ok {
			return
		}
		if d == "" || d == "." || d == ".." || strings.ContainsAny(d, `/\`+"\x00") || filepath.Base(d) != d || len(d) > MaxPointer {
			t.Fatalf("Parse(%q) accepted %q", data, d)
		}
		if filepath.Dir(filepath.Join("/cache/v", d)) != "/cache/v" {
			t.Fatalf("%q leaves its directory", d)
		}
		if again, ok := Parse([]byte(d + "\n")); !ok || again != d {
			t.Fatalf("%q does not read back: %q %v", d, again, ok)
		}
	})
}
