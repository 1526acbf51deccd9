// Package archivetest builds small archives that expand enormously
// (decompression bombs) and measures what a piece of code writes, so that
// every PM can check, in its own tests, that a hostile archive cannot make
// it write more than the caps of package archive.
package archivetest

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
)

// MiB is the size of every file in the bombs built here.
const MiB = 1 << 20

// TgzBomb returns a gzip'd tar of n files of 1 MiB of zeros each, named
// prefix + "zNNNN" (prefix is typically a top directory such as
// "package/"), preceded by the extra regular files given (name → content),
// which let an archive look like what a PM expects (a PKG-INFO, a
// Cargo.toml). It is built cheaply: every header and every body is its
// own gzip member (readers read concatenated members as one stream), and
// the body's member is compressed once. 900 files take about 1 MB.
func TgzBomb(prefix string, n int, extra map[string]string) []byte {
	zw, _ := gzip.NewWriterLevel(io.Discard, gzip.BestCompression)
	member := func(b []byte) []byte {
		var buf bytes.Buffer
		zw.Reset(&buf)
		zw.Write(b)
		zw.Close()
		return buf.Bytes()
	}
	header := func(name string, size int64) []byte {
		var h bytes.Buffer
		tw := tar.NewWriter(&h)
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size})
		tw.Flush()
		return h.Bytes()
	}
	var out bytes.Buffer
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		body := []byte(extra[name])
		var b bytes.Buffer
		b.Write(header(name, int64(len(body))))
		b.Write(body)
		if pad := len(body) % 512; pad != 0 {
			b.Write(make([]byte, 512-pad))
		}
		out.Write(member(b.Bytes()))
	}
	zeros := member(make([]byte, MiB))
	for i := range n {
		out.Write(member(header(fmt.Sprintf("%sz%04d", prefix, i), MiB)))
		out.Write(zeros)
	}
	out.Write(member(make([]byte, 1024))) // the end-of-archive blocks
	return out.Bytes()
}

// ZipBomb returns a zip of the extra files given (name → content, stored
// first) and n entries of 1 MiB of zeros each, named prefix + "zNNNN",
// the deflated body computed once. 900 entries take about 1 MB. With
// declare > 0, each bomb entry's header claims that many bytes instead of
// the real 1 MiB, so only a cap counted as the bytes are written stops it.
func ZipBomb(prefix string, n int, declare uint64, extra map[string]string) []byte {
	var body bytes.Buffer
	fw, _ := flate.NewWriter(&body, flate.BestCompression)
	fw.Write(make([]byte, MiB))
	fw.Close()
	sum := crc32.ChecksumIEEE(make([]byte, MiB))
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		w, _ := zw.Create(name)
		io.WriteString(w, extra[name])
	}
	size := uint64(MiB)
	if declare > 0 {
		size = declare
	}
	for i := range n {
		w, _ := zw.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("%sz%04d", prefix, i), Method: zip.Deflate,
			CRC32: sum, CompressedSize64: uint64(body.Len()), UncompressedSize64: size})
		w.Write(body.Bytes())
	}
	zw.Close()
	return out.Bytes()
}

// ErrUnmeasured is returned by Written where the system does not count a
// process's written bytes (anywhere but Linux).
var ErrUnmeasured = errors.New("this system does not count the bytes a process writes (/proc/self/io)")

// Written runs f and returns the bytes this process passed to write
// system calls meanwhile (Linux's wchar counter): every byte f wrote to any
// file, whatever package wrote it. Writes by other goroutines of the
// process in the meantime are counted too, so a caller should not run in
// parallel with other tests.
func Written(f func()) (int64, error) {
	before, err := wchar()
	if err != nil {
		return 0, err
	}
	f()
	after, err := wchar()
	if err != nil {
		return 0, err
	}
	return after - before, nil
}

func wchar() (int64, error) {
	fh, err := os.Open("/proc/self/io")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrUnmeasured, err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "wchar:"); ok {
			return strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		}
	}
	return 0, fmt.Errorf("%w: no wchar line in /proc/self/io", ErrUnmeasured)
}

// SparseTgz returns a gzip'd tar of the extra regular files given (name →
// content), then n sparse entries named prefix + "sNNNN", each size bytes
// long of which one is stored (the rest a hole, which Go's tar reader fills
// with zeros it never reads): in GNU's old sparse form (type 'S'), or with
// pax, a regular entry made sparse by a PAX header in GNU's 0.1 format
// (GNU.sparse.map). A few hundred bytes stand for n × size.
func SparseTgz(prefix string, n int, size int64, pax bool, extra map[string]string) []byte {
	var raw bytes.Buffer
	tw := tar.NewWriter(&raw)
	for _, name := range slices.Sorted(maps.Keys(extra)) {
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(extra[name]))})
		tw.Write([]byte(extra[name]))
	}
	tw.Flush()
	for i := range n {
		name := fmt.Sprintf("%ss%04d", prefix, i)
		if pax {
			recs := paxRecord("GNU.sparse.size", strconv.FormatInt(size, 10)) + paxRecord("GNU.sparse.numblocks", "1") +
				paxRecord("GNU.sparse.map", fmt.Sprintf("%d,1", size-1))
			raw.Write(rawHeader(name+".pax", tar.TypeXHeader, int64(len(recs)), nil))
			raw.Write(padded([]byte(recs)))
			raw.Write(rawHeader(name, tar.TypeReg, 1, nil))
		} else {
			raw.Write(rawHeader(name, tar.TypeGNUSparse, 1, func(blk []byte) {
				octal := func(off, n int, v int64) { copy(blk[off:off+n], fmt.Sprintf("%0*o\x00", n-1, v)) }
				octal(386, 12, size-1) // sparse[0].offset
				octal(398, 12, 1)      // sparse[0].numbytes
				blk[482] = 0           // no extension header
				octal(483, 12, size)   // realsize
			}))
		}
		raw.Write(padded([]byte("x")))
	}
	raw.Write(make([]byte, 1024))
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	zw.Write(raw.Bytes())
	zw.Close()
	return gz.Bytes()
}

// rawHeader returns a tar header block for name of type typ and size,
// edited by edit (when not nil) before its checksum is computed: what
// archive/tar's writer refuses to write (a sparse type, a PAX header
// written by hand).
func rawHeader(name string, typ byte, size int64, edit func(blk []byte)) []byte {
	var hb bytes.Buffer
	tw := tar.NewWriter(&hb)
	tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, Format: tar.FormatGNU})
	tw.Flush()
	blk := bytes.Clone(hb.Bytes()[:512])
	blk[156] = typ
	if edit != nil {
		edit(blk)
	}
	copy(blk[148:156], "        ")
	var sum int64
	for _, c := range blk {
		sum += int64(c)
	}
	copy(blk[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return blk
}

// paxRecord returns one PAX record, "LEN key=value\n", LEN counting itself.
func paxRecord(k, v string) string {
	n := len(k) + len(v) + 3
	for n != len(fmt.Sprintf("%d %s=%s\n", n, k, v)) {
		n = len(fmt.Sprintf("%d %s=%s\n", n, k, v))
	}
	return fmt.Sprintf("%d %s=%s\n", n, k, v)
}

// padded returns b padded with zeros to a whole number of tar blocks.
func padded(b []byte) []byte {
	if r := len(b) % 512; r != 0 {
		b = append(b, make([]byte, 512-r)...)
	}
	return b
}
