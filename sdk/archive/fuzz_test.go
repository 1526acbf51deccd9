package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzExtract builds an archive of the three formats from fuzzed parts
// (entry names, one per line; a type byte per entry; a body) and extracts
// it under small caps: the result is success or an *Error (never a panic
// nor another failure), a failure leaves the root empty, and a success
// leaves only regular files and directories inside the root. The parts
// are short strings rather than raw archive bytes: the containers are the
// standard library's, the rules are ours, and the fuzzer's minimization,
// quadratic in an input's length, stays cheap.
func FuzzExtract(f *testing.F) {
	f.Add(uint8(0), "package/package.json\npackage/a/b", "00", "{}", uint8(1))
	f.Add(uint8(1), "package/../x", "0", "x", uint8(0))
	f.Add(uint8(0), "package/l\npackage/l/x", "20", "", uint8(1))
	f.Add(uint8(2), "package/A\npackage/a", "00", "1", uint8(0))
	f.Add(uint8(2), "package/d/\npackage/d/f", "50", "f", uint8(0))
	f.Add(uint8(1), "p/h\np/c\np/f", "134", "", uint8(0))
	base := f.TempDir() // cheaper than a t.TempDir per input
	f.Fuzz(func(t *testing.T, format uint8, names, types, body string, strip uint8) {
		var es []entry
		for i, n := range strings.Split(names, "\n") {
			e := entry{name: n, body: body}
			if i < len(types) {
				e.typ = types[i]
			}
			es = append(es, e)
		}
		kind := []string{"tgz", "tar", "zip"}[format%3]
		var data []byte
		var ok bool
		switch kind {
		case "zip":
			data, ok = fuzzZip(es)
		default:
			data, ok = fuzzTar(es)
			if ok && kind == "tgz" {
				data = gz(t, data)
			}
		}
		if !ok {
			return // the writer refused the parts
		}
		dir, err := os.MkdirTemp(base, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		opts := Options{Name: "fuzz", Strip: int(strip % 3),
			Limits: Limits{MaxBytes: 1 << 20, MaxEntries: 64, Ratio: 100, Allowance: 64 << 10}}
		err = run(kind, data, root, opts)
		if err != nil {
			if !IsContent(err) {
				t.Fatalf("not an *Error: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("a refused archive left %d entries", len(ents))
			}
			return
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !d.Type().IsRegular() {
				t.Fatalf("extracted a non-regular file %s (%v)", p, d.Type())
			}
			return nil
		})
	})
}

// fuzzTar writes es as a tar; type bytes are tar type flags ('0' file, '1'
// hard link, '2' symlink, '3' char device, '4' block device, '5'
// directory, '6' FIFO, others as given).
func fuzzTar(es []entry) ([]byte, bool) {
	var buf strings.Builder
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: "target"}
		if h.Typeflag == 0 || h.Typeflag == tar.TypeReg {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.body))
		}
		if tw.WriteHeader(h) != nil {
			return nil, false
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	if tw.Close() != nil {
		return nil, false
	}
	return []byte(buf.String()), true
}

// fuzzZip writes es as a zip; type bytes map to modes as in fuzzTar ('x'
// for an executable file).
func fuzzZip(es []entry) ([]byte, bool) {
	modes := map[byte]fs.FileMode{'2': fs.ModeSymlink, '3': fs.ModeDevice | fs.ModeCharDevice, '4': fs.ModeDevice,
		'5': fs.ModeDir, '6': fs.ModeNamedPipe, '7': fs.ModeSocket, 'x': 0o111}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		h.SetMode(modes[e.typ] | 0o644)
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, false
		}
		w.Write([]byte(e.body))
	}
	if zw.Close() != nil {
		return nil, false
	}
	return buf.Bytes(), true
}

// FuzzExtractEntries lists a tree from fuzzed parts (paths, one per line;
// a type digit per entry, as Type's values; a body that is every file's
// content and every link's target) and writes it under small caps with
// links kept inside: the result is success or an *Error, a failure leaves
// the root empty, and a success leaves only directories, regular files
// and links that resolve to a regular file inside the root.
func FuzzExtractEntries(f *testing.F) {
	f.Add("a\na/b\na/c", "013", "b")
	f.Add("a\na/../../x", "00", "x")
	f.Add("l\nx", "30", "../x")
	f.Add("A\na", "20", "")
	f.Add("d\nd/l\nd/f", "230", "f")
	f.Add("p\n/abs\nq/", "400", "/etc/passwd")
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, names, types, body string) {
		var es []le
		for i, n := range strings.Split(names, "\n") {
			e := le{name: n, body: body, size: -1}
			if i < len(types) {
				e.typ = Type(types[i] - '0')
			}
			es = append(es, e)
		}
		dir, err := os.MkdirTemp(base, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		root, err := os.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer root.Close()
		opts := Options{Links: KeepLinksInside, Limits: Limits{MaxBytes: 1 << 16, MaxEntries: 64, MaxFile: 1 << 12}}
		_, err = ExtractEntries(context.Background(), listOf(es, nil), root, opts)
		if err != nil {
			if !IsContent(err) {
				t.Fatalf("not an *Error: %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Fatalf("a refused tree left %d entries", len(ents))
			}
			return
		}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || d.Type().IsRegular() {
				return nil
			}
			if d.Type()&fs.ModeSymlink == 0 {
				t.Fatalf("wrote a special file %s (%v)", p, d.Type())
			}
			rel, _ := filepath.Rel(dir, p)
			if fi, err := root.Stat(rel); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("kept link %s that does not resolve to a file inside the root: %v", rel, err)
			}
			return nil
		})
	})
}
