package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
	"testing"
)

// countingFile counts the bytes written to a file of the extraction.
type countingFile struct {
	f *os.File
	n *int64
}

func (c countingFile) Write(p []byte) (int, error) {
	n, err := c.f.Write(p)
	*c.n += int64(n)
	return n, err
}

func (c countingFile) Close() error { return c.f.Close() }

// tgzBomb builds, in memory and cheaply, a gzip'd tar of files 1 MiB of
// zeros each, mib of them: every header and every body is its own gzip
// member (gzip readers read concatenated members as one stream), and the
// body's member is compressed once.
func tgzBomb(t testing.TB, mib int) []byte {
	t.Helper()
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestCompression)
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw.Reset(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	zeros := member(make([]byte, 1<<20))
	var out bytes.Buffer
	for i := range mib {
		var h bytes.Buffer
		tw := tar.NewWriter(&h)
		tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("package/z%04d", i), Typeflag: tar.TypeReg, Mode: 0o644, Size: 1 << 20})
		tw.Flush()
		out.Write(member(h.Bytes()))
		out.Write(zeros)
	}
	out.Write(member(make([]byte, 1024))) // the end-of-archive blocks
	return out.Bytes()
}

// TestTgzBomb: a ~1 MB gzip'd tar expanding to 1 GiB (1,024 files of
// 1 MiB, each under every per-entry check) is refused once it passes
// 100 × its size + 8 MiB, never writing more than that, and leaves
// nothing behind.
func TestTgzBomb(t *testing.T) {
	data := tgzBomb(t, 1024)
	if len(data) > 1500<<10 {
		t.Fatalf("bomb is %d bytes; the test wants about 1 MB", len(data))
	}
	dir := t.TempDir()
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	var written int64
	x := newExtraction(root, Options{Name: "bomb.tgz", Strip: 1})
	x.create = func(rel string, mode os.FileMode) (io.WriteCloser, error) {
		f, err := root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		return countingFile{f, &written}, err
	}
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	err := x.tar(context.Background(), zr, int64(len(data)), true)
	if err != nil {
		x.cleanup()
	}
	if !IsContent(err) || !strings.Contains(err.Error(), "cap") {
		t.Fatalf("err = %v, want a refusal over the cap", err)
	}
	budget := DefaultLimits.Ratio*int64(len(data)) + DefaultLimits.Allowance
	if written > budget || written == 0 {
		t.Errorf("wrote %d bytes before refusing; the cap is %d", written, budget)
	}
	t.Logf("%d-byte archive: refused after writing %d bytes (cap %d): %v", len(data), written, budget, err)
	empty(t, dir)
	// The same through the exported entry point.
	if err := ExtractTarGz(context.Background(), bytes.NewReader(data), int64(len(data)), root, Options{Strip: 1}); !IsContent(err) {
		t.Fatalf("ExtractTarGz: %v", err)
	}
	empty(t, dir)
}

// zipBomb builds a zip of n entries of 1 MiB of zeros, the deflated body
// computed once and stored raw. With declare set, each entry's header
// claims that many bytes instead of the real 1 MiB.
func zipBomb(t testing.TB, n int, declare uint64) []byte {
	t.Helper()
	var body bytes.Buffer
	fw, _ := flate.NewWriter(&body, flate.BestCompression)
	fw.Write(make([]byte, 1<<20))
	fw.Close()
	sum := crc32.ChecksumIEEE(make([]byte, 1<<20))
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for i := range n {
		size := uint64(1 << 20)
		if declare > 0 {
			size = declare
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("pkg/z%04d", i), Method: zip.Deflate,
			CRC32: sum, CompressedSize64: uint64(body.Len()), UncompressedSize64: size})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(body.Bytes())
	}
	zw.Close()
	return out.Bytes()
}

// TestZipBomb: a zip of 1,900 × 1 MiB entries (1,900 MiB from about
// 2 MB, each entry small) is refused before anything is written; the same
// entries declaring 1 KiB each are refused as they decompress.
func TestZipBomb(t *testing.T) {
	for name, declare := range map[string]uint64{"honest": 0, "lying": 1 << 10} {
		t.Run(name, func(t *testing.T) {
			data := zipBomb(t, 1900, declare)
			dir, err := extract(t, "zip", data, Options{Name: "bomb.whl"})
			if !IsContent(err) {
				t.Fatalf("err = %v, want a refusal", err)
			}
			t.Logf("%d-byte zip: %v", len(data), err)
			empty(t, dir)
		})
	}
}

// TestRatioAllowsOrdinaryArchives: text compressing 5× unpacks, and the
// allowance lets a small archive of highly compressible data through.
func TestRatioAllowsOrdinaryArchives(t *testing.T) {
	data := zipBomb(t, 6, 0) // 6 MiB of zeros from ~6 KiB: under the allowance
	if _, err := extract(t, "zip", data, Options{}); err != nil {
		t.Fatal(err)
	}
}
