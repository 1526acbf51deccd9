package npmpm

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/archive/archivetest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// logSlack covers what the process writes besides the extraction while a
// measurement runs (the test's own log lines).
const logSlack = 64 << 10

// TestBombWritesAtMostTheCap: a 1 MB tarball of 900 files of 1 MiB of
// zeros (900 MiB expanded) makes the PM write at most the archive cap of
// sdk/archive for its size (100 × its size + 8 MiB), counted by the
// process's written bytes, and is refused as invalid content. Through
// fetch, the download (and the in-process registry sending it) add the
// tarball's size twice.
func TestBombWritesAtMostTheCap(t *testing.T) {
	data := archivetest.TgzBomb("package/", 900, map[string]string{"package/package.json": `{"name":"bomb","version":"1.0.0"}`})
	if len(data) > 1100<<10 {
		t.Fatalf("the bomb is %d bytes; the test wants about 1 MB", len(data))
	}
	size := int64(len(data))
	budget := archive.DefaultLimits.Budget(size)

	dir := t.TempDir()
	var err error
	written, merr := archivetest.Written(func() { err = unpack(context.Background(), bytes.NewReader(data), size, dir) })
	if errors.Is(merr, archivetest.ErrUnmeasured) {
		t.Skip(merr)
	}
	if !archive.IsContent(err) {
		t.Fatalf("unpack: %v, want a refusal", err)
	}
	if written > budget+logSlack || written < 1<<20 {
		t.Errorf("unpacking the %d-byte bomb wrote %d bytes; the cap is %d", size, written, budget)
	}
	t.Logf("unpack: %d-byte tarball, %d bytes written (cap %d): %v", size, written, budget, err)

	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "bomb", Version: "1.0.0", Tarball: data})
	p, cache := newPM(t, t.TempDir(), map[string]string{"npm_config_registry": reg.URL()})
	written, _ = archivetest.Written(func() { _, err = p.Fetch(context.Background(), npmID("bomb", "1.0.0"), protocol.UpdateFetch) })
	if protocol.CodeOf(err) != protocol.CodeInvalidContent {
		t.Fatalf("fetch: %v (code %d), want -32014", err, protocol.CodeOf(err))
	}
	if written > budget+2*size+logSlack {
		t.Errorf("fetching the %d-byte bomb wrote %d bytes; the cap is %d, plus the download", size, written, budget)
	}
	t.Logf("fetch: %d bytes written: %v", written, err)
	if ents := cacheEntries(t, cache); len(ents) != 0 {
		t.Errorf("left in the cache: %v", ents)
	}
}
