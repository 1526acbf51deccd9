package cargopm

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/depcache"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// TestCacheSeesPathDepSkillsThroughLinkedDir: a path dependency (stamped
// file by file) embeds a plugin through skills/shared, a link to docs/
// inside the crate. The walk that decides it follows the link, and so does
// what the cache records: a SKILL.md added under docs/ is seen.
func TestCacheSeesPathDepSkillsThroughLinkedDir(t *testing.T) {
	dir := t.TempDir()
	ws, home := ownedLayout(t, dir)
	// local loses its metadata table: it then offers a plugin only through
	// skills/.
	cargotest.WriteFiles(t, dir, map[string]string{
		"local/Cargo.toml":    "[package]\nname = \"local\"\nversion = \"0.5.0\"\n",
		"local/docs/x/README": "",
		"local/skills/.keep":  "",
	})
	if err := os.Symlink(filepath.Join("..", "docs"), filepath.Join(dir, "local/skills/shared")); err != nil {
		t.Skip(err)
	}
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var computed atomic.Int32
	cached, fresh := ownedHook(ws, home, t.TempDir(), &computed), ownedHook(ws, home, "", &computed)
	first := cached.Run(t).Offers
	cached.Run(t)
	cargotest.WriteFiles(t, dir, map[string]string{"local/docs/x/SKILL.md": "---\nname: x\ndescription: d\n---\n"})
	got := cached.Run(t).Offers
	want := fresh.Run(t).Offers
	pmtest.CheckInvalidation(t, true, first, got, want)
}

// TestCacheTruncatedSnapshotIsComputedAgain: a persisted list_deps entry
// cut inside its dependency lines (a torn write on a file system without
// ordered data, a copy of the cache interrupted) would still parse, one
// version short; the entry's recorded length makes it a miss instead, and
// list_deps answers as a cold run does.
func TestCacheTruncatedSnapshotIsComputedAgain(t *testing.T) {
	ws, home := ownedLayout(t, t.TempDir())
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond) // settled: the answer is stored
	var computed atomic.Int32
	cache := t.TempDir()
	cached, fresh := ownedHook(ws, home, cache, &computed), ownedHook(ws, home, "", &computed)
	want := cached.Run(t).Deps
	files, _ := filepath.Glob(filepath.Join(cache, "cargo", "deps", "*.cache"))
	if len(files) != 1 {
		t.Fatalf("entries %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// Cut the entry three bytes before its end: "local 0.5.0\n" becomes "local 0.5".
	if !bytes.HasSuffix(data, []byte("local 0.5.0\n")) {
		t.Fatalf("entry ends %q", data[len(data)-20:])
	}
	if err := os.WriteFile(files[0], data[:len(data)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	got := cached.Run(t).Deps
	if cold := fresh.Run(t).Deps; !reflect.DeepEqual(cold, want) {
		t.Fatalf("cold %v, first %v", cold, want)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("list_deps from the truncated entry %v, cold %v", got, want)
	}
}

// TestCacheOwnedManifestBecomesOutsideLink: a cargo-owned offered crate's
// SYMPOSIUM.toml replaced by a link out of the crate changes the crate
// directory, which is stamped: the cached answer is recomputed and the
// crate refused, as a cold run refuses it.
func TestCacheOwnedManifestBecomesOutsideLink(t *testing.T) {
	dir := t.TempDir()
	ws, home := ownedLayout(t, dir)
	outside := filepath.Join(t.TempDir(), "evil.toml")
	os.WriteFile(outside, []byte("name = \"evil\"\n"), 0o644)
	time.Sleep(depcache.RacyWindow + 20*time.Millisecond)
	var computed atomic.Int32
	cached, fresh := ownedHook(ws, home, t.TempDir(), &computed), ownedHook(ws, home, "", &computed)
	first := cached.Run(t).Offers
	cached.Run(t)
	m := filepath.Join(home, ownedSrc, "e-1.0.0", "SYMPOSIUM.toml")
	os.Remove(m)
	if err := os.Symlink(outside, m); err != nil {
		t.Skip(err)
	}
	got := cached.Run(t).Offers
	want := fresh.Run(t).Offers
	pmtest.CheckInvalidation(t, true, first, got, want)
}
