package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/archive/archivetest"
)

// TestSparseEntriesRefused: a sparse tar entry, whose holes Go's tar
// reader fills with zeros it never reads from the stream (so the caps,
// counted on the stream, never see them), is refused before anything is
// written: GNU's sparse type and a regular entry made sparse by PAX
// records alike.
func TestSparseEntriesRefused(t *testing.T) {
	for _, pax := range []bool{false, true} {
		data := archivetest.SparseTgz("pkg/", 8, 8<<20, pax, nil) // 64 MiB of holes
		// What archive/tar makes of it: 8 MiB files from one stored byte.
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		if h, err := tar.NewReader(zr).Next(); err != nil || h.Size != 8<<20 {
			t.Fatalf("test set-up (pax %v): archive/tar reads %+v, %v; want a sparse entry of 8 MiB", pax, h, err)
		}
		root, err := os.OpenRoot(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		var written int64
		opts := Options{Name: "pkg.tgz", BeforeWrite: func(_ string, k int) error { written += int64(k); return nil }}
		err = ExtractTarGz(context.Background(), bytes.NewReader(data), int64(len(data)), root, opts)
		if err == nil || !strings.Contains(err.Error(), "is a sparse file") || written != 0 {
			t.Errorf("pax %v: archive of %d bytes: err %v, %d bytes written; want it refused as sparse, nothing written", pax, len(data), err, written)
		}
	}
}
