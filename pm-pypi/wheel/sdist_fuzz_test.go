package wheel

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/archive"
)

// FuzzExtractSdist builds a .tar.gz from fuzzed parts (entry names, one
// per line, with a tar type byte each; PKG-INFO) and extracts it: it
// either fails with an archive content error leaving nothing, or writes
// only regular files and directories inside its destination. Short parts
// rather than raw gzip bytes keep the fuzzer's minimization cheap.
func FuzzExtractSdist(f *testing.F) {
	f.Add("a-1/a/x", "0", meta)
	f.Add("a-1/../../e", "0", meta)
	f.Add("a-1/A\na-1/a", "00", meta)
	f.Add("a-1/l\nb-1/x", "20", meta)
	base := f.TempDir() // cheaper than a t.TempDir per input
	f.Fuzz(func(t *testing.T, names, types, pkgInfo string) {
		hdrs := []*tar.Header{{Name: "a-1/PKG-INFO"}}
		bodies := []string{pkgInfo}
		for i, n := range strings.Split(names, "\n") {
			h := &tar.Header{Name: n, Linkname: "target", Mode: 0o644}
			if i < len(types) {
				h.Typeflag = types[i]
			}
			hdrs = append(hdrs, h)
			bodies = append(bodies, "x")
		}
		data, ok := tryTgz(hdrs, bodies)
		if !ok {
			return
		}
		src, err := os.CreateTemp(base, "a-1-*.tar.gz")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(src.Name())
		src.Write(data)
		dest := src.Name() + ".out"
		defer os.RemoveAll(dest)
		_, err = ExtractSdistFile(context.Background(), src, "a-1.tar.gz", dest, archive.Limits{MaxEntries: 100, MaxBytes: 4 << 20, Ratio: 100, Allowance: 1 << 20})
		src.Close()
		if err != nil {
			if ents, _ := os.ReadDir(base); len(ents) != 1 {
				t.Fatalf("failed extraction left %d entries", len(ents)-1)
			}
			if !archive.IsContent(err) {
				t.Fatalf("not a content error: %v", err)
			}
			return
		}
		filepath.WalkDir(dest, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("extracted a non-regular file %s", p)
			}
			if rel, _ := filepath.Rel(dest, p); strings.HasPrefix(rel, "..") {
				t.Fatalf("extracted outside: %s", p)
			}
			return nil
		})
	})
}

// tryTgz is tgzOf reporting, rather than failing on, headers the tar
// writer refuses.
func tryTgz(hdrs []*tar.Header, bodies []string) ([]byte, bool) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i, h := range hdrs {
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(bodies[i]))
		}
		if tw.WriteHeader(h) != nil {
			return nil, false
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(bodies[i]))
		}
	}
	if tw.Close() != nil || gz.Close() != nil {
		return nil, false
	}
	return buf.Bytes(), true
}
