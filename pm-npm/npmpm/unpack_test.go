package npmpm

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
)

// countingReader counts the compressed bytes the extractor consumed.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestUnpackHostileCorpus runs the shared corpus of malicious tarballs
// through unpack, as the PM does: each is an archive content error naming
// the cause, nothing is left in or beside the output directory, and the
// gzip bombs are refused after reading a small part of their input.
func TestUnpackHostileCorpus(t *testing.T) {
	for _, h := range fakeregistry.HostileTarballs() {
		t.Run(h.Name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "out")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			cr := &countingReader{r: bytes.NewReader(h.Tgz)}
			err := unpack(context.Background(), cr, int64(len(h.Tgz)), dir)
			if !archive.IsContent(err) || !strings.Contains(err.Error(), h.Detail) {
				t.Fatalf("err %v, want an archive content error mentioning %q", err, h.Detail)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 1 {
				t.Errorf("wrote beside the output directory: %v", ents)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left a partial tree: %v", ents)
			}
			if strings.HasPrefix(h.Name, "bomb") && cr.n > int64(len(h.Tgz))/10 {
				t.Errorf("read %d of %d compressed bytes before refusing the bomb", cr.n, len(h.Tgz))
			}
		})
	}
}

// TestUnpack: the top directory is stripped, files at the top level are
// dropped (as npm does), modes are kept executable or not, and what is not
// a collision (a directory listed twice) unpacks.
func TestUnpack(t *testing.T) {
	dir := t.TempDir()
	tgz := fakeregistry.Tarball(
		fakeregistry.Entry{Name: "pax_global_header", Type: tar.TypeXGlobalHeader},
		fakeregistry.Entry{Name: "package/package.json", Body: `{"name":"x"}`},
		fakeregistry.Entry{Name: "package/bin/run", Body: "#!/bin/sh\n", Mode: 0o755},
		fakeregistry.Entry{Name: "package/deep/er/file.txt", Body: "hi"}, // no directory entries
		fakeregistry.Entry{Name: "package/lib/", Type: '5'},
		fakeregistry.Entry{Name: "package/lib/", Type: '5'},
		fakeregistry.Entry{Name: "package/lib/a.js", Body: "a"},
		fakeregistry.Entry{Name: "package/lib.js", Body: "c"},
		fakeregistry.Entry{Name: "toplevel-file", Body: "dropped"},
		fakeregistry.Entry{Name: "toplevel-file", Body: "dropped again"},
	)
	if err := unpack(context.Background(), bytes.NewReader(tgz), int64(len(tgz)), dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "deep/er/file.txt")); string(b) != "hi" {
		t.Errorf("nested file: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin/run")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("executable: %v %v", fi, err)
	}
	for _, f := range []string{"lib/a.js", "lib.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "toplevel-file")); err == nil {
		t.Error("top-level file kept")
	}
}

// FuzzUnpack builds a tarball from fuzzed parts (entry names, one per
// line; a tar type byte per entry; a body) and unpacks it as the PM does:
// it succeeds or fails with an archive content error (-32014 for the PM),
// leaves nothing on failure and writes nothing outside its directory.
// Short parts rather than raw gzip bytes keep the fuzzer's minimization
// cheap, so that thousands of inputs run in 10 s.
func FuzzUnpack(f *testing.F) {
	f.Add("package/package.json\npackage/lib/a.js", "00", "{}")
	f.Add("package/../x", "0", "x")
	f.Add("package/l\npackage/l/x", "20", "")
	f.Add("package/A\nother/a\ntop", "000", "1")
	f.Add("package/d/\npackage/d\npackage/f", "506", "")
	base := f.TempDir() // cheaper than a t.TempDir per input
	f.Fuzz(func(t *testing.T, names, types, body string) {
		var es []fakeregistry.Entry
		for i, n := range strings.Split(names, "\n") {
			e := fakeregistry.Entry{Name: n, Body: body, Linkname: "target"}
			if i < len(types) {
				e.Type = types[i]
			}
			es = append(es, e)
		}
		data := fakeregistry.Tarball(es...)
		parent, err := os.MkdirTemp(base, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(parent)
		dir := filepath.Join(parent, "out")
		os.Mkdir(dir, 0o755)
		err = unpack(context.Background(), bytes.NewReader(data), int64(len(data)), dir)
		if ents, _ := os.ReadDir(parent); len(ents) != 1 {
			t.Fatalf("extraction wrote outside its directory: %v", ents)
		}
		if err != nil {
			if !archive.IsContent(err) {
				t.Fatalf("not a content error: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("a refused tarball left %v", ents)
			}
		}
	})
}
