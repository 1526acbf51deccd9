package archive

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// sparseTarGz builds a gzip'd tar of n old-GNU sparse entries ('S'), each
// with a logical size of real bytes but only 1 byte of stored data (the
// rest is a hole that Go's tar reader expands to zeros).
func sparseTarGz(t *testing.T, n int, real int64) []byte {
	t.Helper()
	var raw bytes.Buffer
	for i := 0; i < n; i++ {
		var hb bytes.Buffer
		tw := tar.NewWriter(&hb)
		if err := tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("pkg/s%04d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: 1, Format: tar.FormatGNU}); err != nil {
			t.Fatal(err)
		}
		tw.Flush()
		blk := hb.Bytes()[:512]
		blk[156] = 'S'
		octal := func(off, n int, v int64) {
			s := fmt.Sprintf("%0*o", n-1, v)
			copy(blk[off:off+n], s+"\x00")
		}
		octal(386, 12, real-1) // sparse[0].offset
		octal(398, 12, 1)      // sparse[0].numbytes
		blk[482] = 0           // not extended
		octal(483, 12, real)   // realsize
		for j := 148; j < 156; j++ {
			blk[j] = ' '
		}
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

// TestSparseEntriesRefused: holes of sparse tar entries are never counted by
// the meter, so an archive can write far more than its cap.
func TestSparseEntriesRefused(t *testing.T) {
	const n, real = 8, 8 << 20 // 8 entries × 8 MiB = 64 MiB
	data := sparseTarGz(t, n, real)
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var written int64
	opts := Options{Name: "sparse.tgz", BeforeWrite: func(_ string, k int) error { written += int64(k); return nil }}
	err = ExtractTarGz(context.Background(), bytes.NewReader(data), int64(len(data)), root, opts)
	budget := DefaultLimits.Budget(int64(len(data)))
	t.Logf("archive %d bytes, budget %d bytes, written %d bytes, err %v", len(data), budget, written, err)
	if err == nil || written > budget {
		t.Fatalf("sparse bomb not refused: archive of %d bytes wrote %d bytes (cap %d), err=%v", len(data), written, budget, err)
	}
}

// paxSparseTarGz builds a gzip'd tar of one regular entry made sparse by a
// PAX header in GNU's 0.1 format (GNU.sparse.map): real bytes long, one
// byte stored.
func paxSparseTarGz(t *testing.T, real int64) []byte {
	t.Helper()
	rec := func(k, v string) string {
		n := len(k) + len(v) + 3
		for len(fmt.Sprintf("%d %s=%s\n", n, k, v)) != n {
			n = len(fmt.Sprintf("%d %s=%s\n", n, k, v))
		}
		return fmt.Sprintf("%d %s=%s\n", n, k, v)
	}
	recs := rec("GNU.sparse.size", fmt.Sprint(real)) + rec("GNU.sparse.numblocks", "1") + rec("GNU.sparse.map", fmt.Sprintf("%d,1", real-1))
	var raw bytes.Buffer
	block := func(name string, typ byte, size int) {
		var hb bytes.Buffer
		tw := tar.NewWriter(&hb)
		if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(size), Format: tar.FormatUSTAR}); err != nil {
			t.Fatal(err)
		}
		tw.Flush()
		blk := hb.Bytes()[:512]
		blk[156] = typ
		for j := 148; j < 156; j++ {
			blk[j] = ' '
		}
		var sum int64
		for _, c := range blk {
			sum += int64(c)
		}
		copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
		raw.Write(blk)
	}
	pad := func(b []byte) {
		raw.Write(b)
		if r := len(b) % 512; r != 0 {
			raw.Write(make([]byte, 512-r))
		}
	}
	block("pkg/PaxHeader", tar.TypeXHeader, len(recs))
	pad([]byte(recs))
	block("pkg/s", tar.TypeReg, 1)
	pad([]byte("x"))
	raw.Write(make([]byte, 1024))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw.Bytes())
	zw.Close()
	return gz.Bytes()
}

// TestPAXSparseEntryRefused: a regular entry made sparse by PAX records
// is refused as GNU's sparse type is.
func TestPAXSparseEntryRefused(t *testing.T) {
	data := paxSparseTarGz(t, 64<<20)
	// What archive/tar makes of it: a 64 MiB file from one stored byte.
	tr := tar.NewReader(mustGunzip(t, data))
	h, err := tr.Next()
	if err != nil || h.Size != 64<<20 {
		t.Fatalf("test set-up: archive/tar reads %+v, %v; want a sparse entry of 64 MiB", h, err)
	}
	root, err := os.OpenRoot(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	var written int64
	opts := Options{Name: "pax.tgz", BeforeWrite: func(_ string, k int) error { written += int64(k); return nil }}
	err = ExtractTarGz(context.Background(), bytes.NewReader(data), int64(len(data)), root, opts)
	if err == nil || !strings.Contains(err.Error(), "sparse") || written != 0 {
		t.Fatalf("PAX sparse entry: err %v, %d bytes written; want it refused as sparse, nothing written", err, written)
	}
}

func mustGunzip(t *testing.T, data []byte) *gzip.Reader {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}
