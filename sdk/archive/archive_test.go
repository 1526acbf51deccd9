package archive

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// entry is one member of a test archive.
type entry struct {
	name, body, link string
	typ              byte // tar type; 0 for a regular file
	mode             int64
	size             int64 // declared size when no body (tar: zeros)
}

func tarOf(t testing.TB, es ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Linkname: e.link, Mode: e.mode}
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag == tar.TypeXGlobalHeader {
			h = &tar.Header{Typeflag: tar.TypeXGlobalHeader, PAXRecords: map[string]string{"comment": "g"}}
		} else if h.Mode == 0 {
			h.Mode = 0o644
		}
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(e.body))
			if e.size > 0 {
				h.Size = e.size
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if e.size > 0 {
				io.CopyN(tw, zeroReader{}, e.size)
			} else {
				tw.Write([]byte(e.body))
			}
		}
	}
	tw.Close()
	return buf.Bytes()
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func tgzOf(t testing.TB, es ...entry) []byte { return gz(t, tarOf(t, es...)) }

// zipOf builds a zip; mode may carry fs.ModeSymlink and friends.
func zipOf(t testing.TB, es ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(fs.FileMode(e.mode))
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// extract runs the extractor for format ("tgz", "tar" or "zip") into a
// fresh directory and returns that directory and the error.
func extract(t testing.TB, format string, data []byte, opts Options) (string, error) {
	t.Helper()
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	return dir, run(format, data, root, opts)
}

func run(format string, data []byte, root *os.Root, opts Options) error {
	ctx := context.Background()
	switch format {
	case "tgz":
		return ExtractTarGz(ctx, bytes.NewReader(data), int64(len(data)), root, opts)
	case "tar":
		return ExtractTar(ctx, bytes.NewReader(data), int64(len(data)), root, opts)
	default:
		return ExtractZip(ctx, bytes.NewReader(data), int64(len(data)), root, opts)
	}
}

// empty fails the test when dir holds anything.
func empty(t testing.TB, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("a refused archive left %v in %s", names, dir)
	}
}

func TestExtractWritesFiles(t *testing.T) {
	for _, format := range []string{"tgz", "tar", "zip"} {
		t.Run(format, func(t *testing.T) {
			es := []entry{
				{name: "package/a.txt", body: "a"},
				{name: "package/bin/run", body: "#!/bin/sh\n", mode: 0o755},
				{name: "package/deep/er/f.txt", body: "deep"},
			}
			var data []byte
			switch format {
			case "tgz":
				data = tgzOf(t, es...)
			case "tar":
				data = tarOf(t, es...)
			default:
				data = zipOf(t, es...)
			}
			sums := map[string][32]byte{}
			dir, err := extract(t, format, data, Options{Name: "x", Strip: 1, OnFile: func(n string, s [32]byte) error {
				sums[n] = s
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "deep/er/f.txt")); string(b) != "deep" {
				t.Errorf("deep file = %q", b)
			}
			if fi, err := os.Stat(filepath.Join(dir, "bin/run")); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("executable: %v %v", fi, err)
			}
			if fi, err := os.Stat(filepath.Join(dir, "a.txt")); err != nil || fi.Mode().Perm() != 0o644 {
				t.Errorf("plain file: %v %v", fi, err)
			}
			if sums["a.txt"] != sha256.Sum256([]byte("a")) || len(sums) != 3 {
				t.Errorf("OnFile sums: %v", sums)
			}
		})
	}
}

// TestExtractRefusesHostile runs hostile archives of each format: each is
// an *Error whose message names the entry and the cause, and nothing is
// left in the root.
func TestExtractRefusesHostile(t *testing.T) {
	pj := entry{name: "package/package.json", body: "{}"}
	cases := []struct {
		name   string
		es     []entry
		tarOny bool // a tar-only entry type
		opts   Options
		detail string
	}{
		{"dotdot", []entry{pj, {name: "package/../../evil", body: "x"}}, false, Options{}, `"package/../../evil" escapes the root`},
		{"dotdot-bare", []entry{{name: "../evil", body: "x"}}, false, Options{}, "escapes the root"},
		{"backslash-dotdot", []entry{pj, {name: `package\..\..\evil`, body: "x"}}, false, Options{}, "escapes the root"},
		{"backslash", []entry{pj, {name: `package\evil`, body: "x"}}, false, Options{}, "backslash"},
		{"absolute", []entry{pj, {name: "/tmp/evil", body: "x"}}, false, Options{}, "absolute"},
		{"drive", []entry{pj, {name: "C:/evil", body: "x"}}, false, Options{}, "absolute"},
		{"zip-nul", []entry{pj, {name: "package/a\x00b", body: "x"}}, false, Options{}, "NUL"},
		{"long-component", []entry{pj, {name: "package/" + strings.Repeat("n", 300), body: "x"}}, false, Options{}, "over 255 bytes"},
		{"long-path", []entry{pj, {name: strings.Repeat("d/", 2100) + "f", body: "x"}}, false, Options{}, "over 4095 bytes"},
		{"symlink", []entry{pj, {name: "package/l", typ: tar.TypeSymlink, link: "/etc/passwd"}}, true, Options{}, "symbolic link"},
		{"symlink-inside", []entry{pj, {name: "package/l", typ: tar.TypeSymlink, link: "package.json"}}, true, Options{}, "symbolic link"},
		{"zip-symlink", []entry{pj, {name: "package/l", body: "/etc/passwd", mode: int64(fs.ModeSymlink | 0o777)}}, false, Options{}, "symbolic link"},
		{"hardlink", []entry{pj, {name: "package/h", typ: tar.TypeLink, link: "/etc/passwd"}}, true, Options{}, "hard link"},
		{"chardev", []entry{pj, {name: "package/null", typ: tar.TypeChar}}, true, Options{}, "device"},
		{"blockdev", []entry{pj, {name: "package/sda", typ: tar.TypeBlock}}, true, Options{}, "device"},
		{"fifo", []entry{pj, {name: "package/fifo", typ: tar.TypeFifo}}, true, Options{}, "FIFO"},
		{"zip-fifo", []entry{pj, {name: "package/fifo", mode: int64(fs.ModeNamedPipe | 0o644)}}, false, Options{}, "FIFO"},
		{"zip-device", []entry{pj, {name: "package/dev", mode: int64(fs.ModeDevice | fs.ModeCharDevice | 0o644)}}, false, Options{}, "device"},
		{"duplicate", []entry{pj, {name: "package/a", body: "1"}, {name: "package/a", body: "2"}}, false, Options{}, "more than once"},
		{"duplicate-dot", []entry{pj, {name: "package/./package.json", body: "2"}}, false, Options{}, "more than once"},
		{"duplicate-stripped", []entry{pj, {name: "other/package.json", body: "2"}}, false, Options{Strip: 1}, "more than once"},
		{"case-files", []entry{pj, {name: "package/README", body: "1"}, {name: "package/readme", body: "2"}}, false, Options{}, "differing only in case"},
		{"case-dirs", []entry{pj, {name: "package/Skills/a", body: "1"}, {name: "package/skills/b", body: "2"}}, false, Options{}, "differing only in case"},
		{"file-then-dir", []entry{pj, {name: "package/lib", body: "1"}, {name: "package/lib/x", body: "2"}}, false, Options{}, "directory"},
		{"dir-then-file", []entry{pj, {name: "package/lib/", typ: tar.TypeDir}, {name: "package/lib", body: "2"}}, true, Options{}, "directory"},
		{"outside-top", []entry{pj, {name: "other/x", body: "1"}}, false, Options{Top: "package"}, `not under "package/"`},
		{"entries", []entry{pj, {name: "package/a"}, {name: "package/b"}}, false, Options{Limits: Limits{MaxBytes: 1 << 20, MaxEntries: 2}}, "entries"},
		{"file-cap", []entry{pj, {name: "package/a", body: "12345"}}, false, Options{Limits: Limits{MaxBytes: 1 << 20, MaxEntries: 10, MaxFile: 4}}, "over the cap of 4 bytes for one file"},
		{"total", []entry{pj, {name: "package/a", body: strings.Repeat("x", 3000)}}, false, Options{Limits: Limits{MaxBytes: 2048, MaxEntries: 10}}, "cap"},
	}
	for _, format := range []string{"tgz", "tar", "zip"} {
		for _, tc := range cases {
			if format == "zip" && tc.tarOny || format != "zip" && strings.HasPrefix(tc.name, "zip-") {
				continue
			}
			t.Run(format+"/"+tc.name, func(t *testing.T) {
				var data []byte
				switch format {
				case "tgz":
					data = tgzOf(t, tc.es...)
				case "tar":
					data = tarOf(t, tc.es...)
				default:
					data = zipOf(t, tc.es...)
				}
				opts := tc.opts
				opts.Name = "evil-1.0.tgz"
				dir, err := extract(t, format, data, opts)
				var ae *Error
				if !errors.As(err, &ae) {
					t.Fatalf("err = %v, want an *Error", err)
				}
				if !strings.Contains(err.Error(), tc.detail) || !strings.HasPrefix(err.Error(), "evil-1.0.tgz: ") {
					t.Errorf("err = %q, want the archive's name and %q", err, tc.detail)
				}
				empty(t, dir)
			})
		}
	}
}

// TestExtractCorrupt: truncated and garbage input is an *Error, never a
// panic or a write failure, and leaves nothing.
func TestExtractCorrupt(t *testing.T) {
	good := tgzOf(t, entry{name: "p/a", body: strings.Repeat("y", 10000)}, entry{name: "p/b", body: "b"})
	goodZip := zipOf(t, entry{name: "p/a", body: strings.Repeat("y", 10000)})
	for name, tc := range map[string]struct {
		format string
		data   []byte
	}{
		"truncated tgz":  {"tgz", good[:len(good)/2]},
		"not gzip":       {"tgz", []byte("not gzip")},
		"empty":          {"tgz", nil},
		"truncated zip":  {"zip", goodZip[:len(goodZip)-10]},
		"not zip":        {"zip", []byte("PK\x03\x04 not a zip")},
		"truncated tar":  {"tar", tarOf(t, entry{name: "p/a", body: strings.Repeat("z", 4000)})[:1500]},
		"trailing bytes": {"tgz", gz(t, append(tarOf(t, entry{name: "p/a", body: "a"}), make([]byte, 2<<20)...))},
	} {
		t.Run(name, func(t *testing.T) {
			dir, err := extract(t, tc.format, tc.data, Options{Name: "c"})
			if !IsContent(err) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			empty(t, dir)
		})
	}
}

// TestExtractDropsTopLevelFiles: with Strip, a top-level file is dropped
// (as npm does), even twice, and what is not a collision unpacks.
func TestExtractDropsTopLevelFiles(t *testing.T) {
	data := tgzOf(t,
		entry{name: "pax_global_header", typ: tar.TypeXGlobalHeader},
		entry{name: "package/", typ: tar.TypeDir},
		entry{name: "package/lib/", typ: tar.TypeDir},
		entry{name: "package/lib/", typ: tar.TypeDir},
		entry{name: "package/lib/a.js", body: "a"},
		entry{name: "package/lib.js", body: "c"},
		entry{name: "toplevel", body: "dropped"},
		entry{name: "toplevel", body: "dropped again"},
	)
	dir, err := extract(t, "tgz", data, Options{Strip: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"lib/a.js", "lib.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "toplevel")); err == nil {
		t.Error("top-level file kept")
	}
}

// TestCheckOnly: a nil root checks without writing anything.
func TestCheckOnly(t *testing.T) {
	ctx := context.Background()
	ok := tgzOf(t, entry{name: "c-1/src/lib.rs", body: "x"})
	if err := ExtractTarGz(ctx, bytes.NewReader(ok), int64(len(ok)), nil, Options{Top: "c-1"}); err != nil {
		t.Fatal(err)
	}
	bad := tgzOf(t, entry{name: "c-1/l", typ: tar.TypeSymlink, link: "/"})
	if err := ExtractTarGz(ctx, bytes.NewReader(bad), int64(len(bad)), nil, Options{Top: "c-1"}); !IsContent(err) {
		t.Fatalf("check of a symlink: %v", err)
	}
}

// TestExtractKeepsWhatWasThere: a failed extraction removes only what it
// created.
func TestExtractKeepsWhatWasThere(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "mine"), []byte("keep"), 0o644)
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	data := tgzOf(t, entry{name: "p/a", body: "a"}, entry{name: "p/b/c", body: "c"}, entry{name: "p/l", typ: tar.TypeSymlink, link: "/"})
	if err := run("tgz", data, root, Options{}); !IsContent(err) {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "mine" {
		t.Errorf("after a refusal the root holds %v", ents)
	}
}

// failingFile fails every write with ENOSPC, as a full disk does.
type failingFile struct{ name string }

func (f failingFile) Write(p []byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
}
func (failingFile) Close() error { return nil }

// TestExtractDiskFull: a write failure is returned as the machine's
// failure (not an *Error), naming the path, and the partial tree is gone.
func TestExtractDiskFull(t *testing.T) {
	for _, format := range []string{"tgz", "zip"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			root, _ := os.OpenRoot(dir)
			defer root.Close()
			es := []entry{{name: "p/ok", body: "fits"}, {name: "p/big", body: "does not fit"}}
			data := tgzOf(t, es...)
			if format == "zip" {
				data = zipOf(t, es...)
			}
			x := newExtraction(root, Options{Name: "p.tgz"})
			x.create = func(rel string, mode os.FileMode) (io.WriteCloser, error) {
				if rel == "p/big" {
					return failingFile{filepath.Join(dir, rel)}, nil
				}
				return root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
			}
			var err error
			if format == "zip" {
				err = x.zip(context.Background(), bytes.NewReader(data), int64(len(data)))
			} else {
				zr, _ := gzip.NewReader(bytes.NewReader(data))
				err = x.tar(context.Background(), zr, int64(len(data)), true)
			}
			if err != nil {
				x.cleanup()
			}
			if IsContent(err) || !errors.Is(err, syscall.ENOSPC) || !strings.Contains(err.Error(), filepath.Join(dir, "p/big")) {
				t.Fatalf("err = %v, want ENOSPC naming %s", err, filepath.Join(dir, "p/big"))
			}
			empty(t, dir)
		})
	}
}

// TestExtractCancelled: a cancelled context stops the extraction with the
// context's error and nothing left.
func TestExtractCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	data := tgzOf(t, entry{name: "p/a", body: "a"})
	dir := t.TempDir()
	root, _ := os.OpenRoot(dir)
	defer root.Close()
	if err := ExtractTarGz(ctx, bytes.NewReader(data), int64(len(data)), root, Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	empty(t, dir)
}

func TestErrorText(t *testing.T) {
	e := &Error{Archive: "a.tgz", Entry: "x/../y", Reason: "escapes the root"}
	if got := e.Error(); got != `a.tgz: entry "x/../y" escapes the root` {
		t.Errorf("%q", got)
	}
	e = &Error{Reason: "is not a gzip stream"}
	if got := fmt.Sprint(e); got != "is not a gzip stream" {
		t.Errorf("%q", got)
	}
}
