package pypipm

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
	"github.com/symposium-dev/symposium-pm/sdk/pyname"
)

// hostileCase is one malicious distribution and what the refusal must say.
type hostileCase struct {
	name string // project name
	data []byte
	file string
	want string // regexp the -32014 message must match
}

// hostileWheel is a wheel for name 1.0 that is valid except for what
// extra adds.
func hostileWheel(t *testing.T, name string, extra func(zw *zip.Writer)) (string, []byte) {
	t.Helper()
	esc := pyname.WheelEscape(name)
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create(esc + "-1.0.dist-info/METADATA")
	w.Write([]byte("Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"))
	w, _ = zw.Create(esc + "/__init__.py")
	w.Write([]byte("\n"))
	if extra != nil {
		extra(zw)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return esc + "-1.0-py3-none-any.whl", buf.Bytes()
}

func zipEntry(zw *zip.Writer, name string, mode fs.FileMode, body string) {
	h := &zip.FileHeader{Name: name, Method: zip.Deflate}
	if mode != 0 {
		h.SetMode(mode)
	}
	w, _ := zw.CreateHeader(h)
	w.Write([]byte(body))
}

// hostileSdist is an sdist for name 1.0 that is valid except for the
// extra headers (regular files get body, or size bytes of zeros).
func hostileSdist(t *testing.T, name string, extra ...*tar.Header) (string, []byte) {
	t.Helper()
	top := pyname.WheelEscape(name) + "-1.0"
	var buf bytes.Buffer
	gz, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	tw := tar.NewWriter(gz)
	info := "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"
	hdrs := append([]*tar.Header{{Name: top + "/", Typeflag: tar.TypeDir, Mode: 0o755},
		{Name: top + "/PKG-INFO", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(info))}}, extra...)
	for i, h := range hdrs {
		h.Name = strings.ReplaceAll(h.Name, "TOP", top)
		if h.Mode == 0 {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		switch {
		case i == 1:
			tw.Write([]byte(info))
		case h.Typeflag == tar.TypeReg && h.Size > 0:
			tw.Write(make([]byte, h.Size))
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	gz.Close()
	return top + ".tar.gz", buf.Bytes()
}

// hostileCorpus is the list of malicious archives, as wheels and
// as sdists. abs is an absolute path inside the test's directory that an
// archive tries to write.
func hostileCorpus(t *testing.T, abs string) []hostileCase {
	var cs []hostileCase
	wh := func(name, want string, extra func(zw *zip.Writer)) {
		f, d := hostileWheel(t, name, extra)
		cs = append(cs, hostileCase{name, d, f, want})
	}
	sd := func(name, want string, extra ...*tar.Header) {
		f, d := hostileSdist(t, name, extra...)
		cs = append(cs, hostileCase{name, d, f, want})
	}
	escapes := "escapes the root|absolute path"
	wh("w-dotdot", escapes, func(zw *zip.Writer) { zipEntry(zw, "../../escape.txt", 0, "x") })
	wh("w-nested-dotdot", escapes, func(zw *zip.Writer) { zipEntry(zw, "w_nested_dotdot/../../../escape.txt", 0, "x") })
	wh("w-absolute", escapes, func(zw *zip.Writer) { zipEntry(zw, abs, 0, "x") })
	wh("w-backslash", "escapes the root|backslash", func(zw *zip.Writer) { zipEntry(zw, `..\..\escape.txt`, 0, "x") })
	wh("w-symlink", "symbolic link", func(zw *zip.Writer) {
		zipEntry(zw, "w_symlink/link", fs.ModeSymlink|0o777, "../../../../../../etc/passwd")
	})
	wh("w-chardev", "is a device", func(zw *zip.Writer) {
		zipEntry(zw, "w_chardev/tty", fs.ModeDevice|fs.ModeCharDevice|0o666, "")
	})
	wh("w-blockdev", "is a device", func(zw *zip.Writer) { zipEntry(zw, "w_blockdev/sda", fs.ModeDevice|0o666, "") })
	wh("w-fifo", "is a FIFO", func(zw *zip.Writer) { zipEntry(zw, "w_fifo/p", fs.ModeNamedPipe|0o666, "") })
	wh("w-zipbomb", "bomb", func(zw *zip.Writer) { zipEntry(zw, "w_zipbomb/zeros", 0, string(make([]byte, 16<<20))) })
	// A header claiming 10 bytes over 16 MiB of deflated zeros.
	wh("w-lying-bomb", "header says|not a valid zip", func(zw *zip.Writer) {
		var comp bytes.Buffer
		fw, _ := flate.NewWriter(&comp, flate.BestSpeed)
		fw.Write(make([]byte, 16<<20))
		fw.Close()
		w, err := zw.CreateRaw(&zip.FileHeader{Name: "w_lying_bomb/zeros", Method: zip.Deflate,
			CompressedSize64: uint64(comp.Len()), UncompressedSize64: 10})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(comp.Bytes())
	})
	wh("w-duplicate", "appears more than once", func(zw *zip.Writer) {
		zipEntry(zw, "w_duplicate/x.py", 0, "a")
		zipEntry(zw, "w_duplicate/x.py", 0, "b")
	})
	wh("w-case", "differing only in case", func(zw *zip.Writer) {
		zipEntry(zw, "w_case/README.txt", 0, "a")
		zipEntry(zw, "w_case/ReadMe.txt", 0, "b")
	})
	wh("w-case-dir", "differing only in case", func(zw *zip.Writer) { zipEntry(zw, "W_Case_Dir/x.py", 0, "a") })

	sd("s-dotdot", escapes, &tar.Header{Name: "TOP/../../escape.txt", Typeflag: tar.TypeReg})
	sd("s-absolute", escapes, &tar.Header{Name: abs, Typeflag: tar.TypeReg})
	sd("s-symlink-abs", "is a symbolic link", &tar.Header{Name: "TOP/etc", Typeflag: tar.TypeSymlink, Linkname: "/etc"})
	sd("s-symlink-up", "is a symbolic link", &tar.Header{Name: "TOP/up", Typeflag: tar.TypeSymlink, Linkname: "../../../.."})
	sd("s-hardlink-abs", "is a hard link", &tar.Header{Name: "TOP/passwd", Typeflag: tar.TypeLink, Linkname: "/etc/passwd"})
	sd("s-hardlink-up", "is a hard link", &tar.Header{Name: "TOP/up", Typeflag: tar.TypeLink, Linkname: "../../escape.txt"})
	sd("s-chardev", "is a device", &tar.Header{Name: "TOP/null", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3})
	sd("s-blockdev", "is a device", &tar.Header{Name: "TOP/sda", Typeflag: tar.TypeBlock, Devmajor: 8})
	sd("s-fifo", "is a FIFO", &tar.Header{Name: "TOP/p", Typeflag: tar.TypeFifo})
	sd("s-gzipbomb", "bomb", &tar.Header{Name: "TOP/zeros", Typeflag: tar.TypeReg, Size: 16 << 20})
	sd("s-duplicate", "appears more than once", &tar.Header{Name: "TOP/x", Typeflag: tar.TypeReg, Size: 1},
		&tar.Header{Name: "TOP/x", Typeflag: tar.TypeReg, Size: 2})
	sd("s-case", "differing only in case", &tar.Header{Name: "TOP/a.txt", Typeflag: tar.TypeReg, Size: 1},
		&tar.Header{Name: "TOP/A.txt", Typeflag: tar.TypeReg, Size: 1})
	return cs
}

// TestHostileArchives serves every archive of the corpus from the index:
// fetch and load_plugin refuse each with -32014 naming the cause, nothing
// is written under <cache_dir> but its empty pypi/tmp, nothing lands beside
// it or at the absolute paths the archives name, and update "none" then
// finds nothing cached; a real process answers the same over the wire.
// The same builders without the hostile entry make
// distributions that fetch fine.
func TestHostileArchives(t *testing.T) {
	root := t.TempDir()
	abs := filepath.Join(root, "abs-escape.txt")
	corpus := hostileCorpus(t, abs)
	ix := fakeindex.Start()
	t.Cleanup(ix.Close)
	for _, c := range corpus {
		ix.Add(fakeindex.Package{Name: c.name, Version: "1.0", Raw: c.data, Filename: c.file})
	}
	for _, name := range []string{"good-wheel", "good-sdist"} {
		var f string
		var d []byte
		if name == "good-wheel" {
			f, d = hostileWheel(t, name, nil)
		} else {
			f, d = hostileSdist(t, name, &tar.Header{Name: "TOP/good_sdist/x.py", Typeflag: tar.TypeReg, Size: 3})
		}
		ix.Add(fakeindex.Package{Name: name, Version: "1.0", Raw: d, Filename: f})
	}
	ws, cache := filepath.Join(root, "ws"), filepath.Join(root, "cache")
	os.MkdirAll(ws, 0o755)
	p := newPM(t, ws, cache, map[string]string{"PIP_INDEX_URL": ix.URL})
	ctx := context.Background()
	for _, c := range corpus {
		_, err := p.Fetch(ctx, id(c.name, "*"), protocol.UpdateCheck)
		if code(err) != protocol.CodeInvalidContent || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s (%s): fetch got %v, want -32014 matching %q", c.name, c.file, err, c.want)
		}
		if _, err := p.LoadPlugin(ctx, id(c.name, "1.0")); code(err) != protocol.CodeInvalidContent {
			t.Errorf("%s: load_plugin got %v, want -32014", c.name, err)
		}
		if _, err := p.Fetch(ctx, id(c.name, "1.0"), protocol.UpdateNone); code(err) != protocol.CodeOffline {
			t.Errorf("%s: none after the refusal: %v", c.name, err)
		}
	}
	tree := treeOf(t, cache)
	if files := onlyDirs(tree); len(files) != 0 {
		t.Errorf("hostile archives wrote files under the cache: %v", files)
	}
	for _, d := range tree {
		if d != "pypi/" && d != "pypi/tmp/" {
			t.Errorf("hostile archives left %s", d)
		}
	}
	if ents, _ := os.ReadDir(root); len(ents) != 2 {
		t.Errorf("beside the cache: %v", treeOf(t, root)[:min(20, len(treeOf(t, root)))])
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Errorf("written into the workspace: %v", treeOf(t, ws))
	}
	for _, f := range []string{abs, filepath.Join(os.TempDir(), "escape.txt")} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s written", f)
		}
	}
	// The same through a real process, over the wire, into a fresh cache.
	cache2 := filepath.Join(t.TempDir(), "cache")
	proc := startPM(t, baseProcEnv(t), ws, cache2, map[string]string{"PIP_INDEX_URL": ix.URL})
	for _, c := range corpus {
		if r := proc.Call("fetch", fetchParams(c.name, "*", "fetch")); r.Code() != -32014 {
			t.Errorf("%s over the wire: %s", c.name, r.Raw)
		}
	}
	proc.Close()
	for _, d := range treeOf(t, cache2) {
		if d != "pypi/" && d != "pypi/tmp/" {
			t.Errorf("hostile archives left %s (real process)", d)
		}
	}
	// The controls.
	for _, name := range []string{"good-wheel", "good-sdist"} {
		if _, err := p.Fetch(ctx, id(name, "*"), protocol.UpdateCheck); err != nil {
			t.Errorf("control %s: %v", name, err)
		}
	}
}
