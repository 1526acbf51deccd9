package npmpm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// sparseTgz: package/package.json, then n old-GNU sparse entries of
// logical size real each, with one stored byte (the rest is a hole).
func sparseTgz(t *testing.T, n int, real int64) []byte {
	t.Helper()
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	pj := []byte(`{"name":"sparse","version":"1.0.0"}`)
	tw.WriteHeader(&tar.Header{Name: "package/package.json", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(pj))})
	tw.Write(pj)
	tw.Flush()
	for i := 0; i < n; i++ {
		var hb bytes.Buffer
		hw := tar.NewWriter(&hb)
		hw.WriteHeader(&tar.Header{Name: fmt.Sprintf("package/s%04d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: 1, Format: tar.FormatGNU})
		hw.Flush()
		blk := hb.Bytes()[:512]
		blk[156] = 'S'
		octal := func(off, n int, v int64) { copy(blk[off:off+n], fmt.Sprintf("%0*o", n-1, v)+"\x00") }
		octal(386, 12, real-1) // sparse[0].offset
		octal(398, 12, 1)      // sparse[0].numbytes
		blk[482] = 0
		octal(483, 12, real) // realsize
		copy(blk[148:156], "        ")
		var sum int64
		for _, c := range blk {
			sum += int64(c)
		}
		copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
		raw.Write(blk)
		data := make([]byte, 512)
		data[0] = 'x'
		raw.Write(data)
	}
	raw.Write(make([]byte, 1024))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw.Bytes())
	zw.Close()
	return gz.Bytes()
}

// TestFetchRefusesSparseTarball: a tarball of a few hundred bytes whose
// sparse entries would unpack to 96 MiB of zeros (archive/tar expands
// holes it never reads, past the caps counted on the stream) is refused,
// and leaves nothing in the cache.
func TestFetchRefusesSparseTarball(t *testing.T) {
	data := sparseTgz(t, 12, 8<<20) // 12 × 8 MiB = 96 MiB
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
