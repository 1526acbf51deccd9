package npmpm

import (
	"context"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/archive/archivetest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestFetchRefusesSparseTarball: a tarball of a few hundred bytes whose
// sparse entries would unpack to 96 MiB of zeros (archive/tar expands
// holes it never reads, past the caps counted on the stream) is refused,
// and leaves nothing in the cache.
func TestFetchRefusesSparseTarball(t *testing.T) {
	data := archivetest.SparseTgz("package/", 12, 8<<20, false, map[string]string{"package/package.json": `{"name":"sparse","version":"1.0.0"}`}) // 12 × 8 MiB = 96 MiB
	budget := archive.DefaultLimits.Budget(int64(len(data)))
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "sparse", Version: "1.0.0", Tarball: data})
	p, cache := newPM(t, t.TempDir(), map[string]string{"npm_config_registry": reg.URL()})
	res, err := p.Fetch(context.Background(), npmID("sparse", "1.0.0"), protocol.UpdateFetch)
	var total int64
	filepath.WalkDir(cache, func(_ string, d fs.DirEntry, _ error) error {
		if d != nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	t.Logf("tarball %d bytes, cap %d bytes; fetch err=%v root=%s; cache now holds %d bytes", len(data), budget, err, res.Root, total)
	if err == nil || total > budget {
		t.Fatalf("a %d-byte tarball was accepted and unpacked to %d bytes in the cache (cap %d)", len(data), total, budget)
	}
}
