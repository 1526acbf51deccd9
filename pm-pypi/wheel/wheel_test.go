package wheel

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
	"github.com/symposium-dev/symposium-pm/sdk/archive"
)

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExtractWheelKeepsExecutables(t *testing.T) {
	data := zipOf(t, func(zw *zip.Writer) {
		addFile(zw, "tool-1.0.dist-info/METADATA", "Name: tool\nVersion: 1.0\n")
		h := &zip.FileHeader{Name: "tool/hooks/run.sh"}
		h.SetMode(0o755)
		w, _ := zw.CreateHeader(h)
		w.Write([]byte("#!/bin/sh\n"))
		h = &zip.FileHeader{Name: "tool/data.txt"}
		h.SetMode(0o666)
		w, _ = zw.CreateHeader(h)
		w.Write([]byte("x"))
	})
	dest := filepath.Join(t.TempDir(), "out")
	if _, err := ExtractWheel(context.Background(), writeTemp(t, "tool-1.0-py3-none-any.whl", data), dest, archive.DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(dest, "tool/hooks/run.sh")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("script lost its execute bit: %v %v", st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Join(dest, "tool/data.txt")); err != nil || st.Mode().Perm()&0o022 != 0 {
		t.Errorf("data file mode not normalized: %v %v", st.Mode(), err)
	}
}

func TestExtractWheel(t *testing.T) {
	data := fakeindex.BuildWheel(fakeindex.Package{Name: "Demo.Plugin", Version: "1.0", Summary: "demo",
		Files:       map[string]string{"demo_plugin/__init__.py": "x = 1\n", "demo_plugin/skills/a/SKILL.md": "hi"},
		EntryPoints: "[symposium]\nd = demo_plugin\n"})
	src := writeTemp(t, "demo_plugin-1.0-py3-none-any.whl", data)
	dest := filepath.Join(t.TempDir(), "out")
	info, err := ExtractWheel(context.Background(), src, dest, archive.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if info.Metadata.Name != "Demo.Plugin" || info.DistInfo != "demo_plugin-1.0.dist-info" || info.EntryPoints["symposium"][0].Module() != "demo_plugin" {
		t.Errorf("%+v", info)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "demo_plugin/skills/a/SKILL.md")); err != nil || string(b) != "hi" {
		t.Errorf("extracted file: %q %v", b, err)
	}
}

func zipOf(t testing.TB, entries func(zw *zip.Writer)) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	entries(zw)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func addFile(zw *zip.Writer, name, body string) {
	w, _ := zw.Create(name)
	w.Write([]byte(body))
}

const meta = "Name: evil\nVersion: 1.0\n"

func TestExtractWheelRejects(t *testing.T) {
	bomb := zipOf(t, func(zw *zip.Writer) {
		addFile(zw, "evil-1.0.dist-info/METADATA", meta)
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: "evil/zeros", Method: zip.Deflate})
		w.Write(make([]byte, 50<<20))
	})
	cases := map[string][]byte{
		"dotdot": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			addFile(zw, "../escape.txt", "x")
		}),
		"nested dotdot": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			addFile(zw, "evil/../../escape.txt", "x")
		}),
		"absolute": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			addFile(zw, "/tmp/escape.txt", "x")
		}),
		"backslash": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			addFile(zw, `..\escape.txt`, "x")
		}),
		"symlink": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			h := &zip.FileHeader{Name: "evil/link"}
			h.SetMode(fs.ModeSymlink | 0o777)
			w, _ := zw.CreateHeader(h)
			w.Write([]byte("/etc/passwd"))
		}),
		"bomb":        bomb,
		"no metadata": zipOf(t, func(zw *zip.Writer) { addFile(zw, "evil/x.py", "") }),
		"two dist-infos": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			addFile(zw, "other-1.0.dist-info/METADATA", "Name: other\nVersion: 1\n")
		}),
		"record mismatch": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			addFile(zw, "evil/x.py", "tampered")
			addFile(zw, "evil-1.0.dist-info/RECORD", "evil/x.py,sha256=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,8\n")
		}),
		"duplicate": zipOf(t, func(zw *zip.Writer) {
			addFile(zw, "evil-1.0.dist-info/METADATA", meta)
			addFile(zw, "evil/x.py", "a")
			addFile(zw, "evil/x.py", "b")
		}),
		"not a zip": []byte("PK\x03\x04 this is not a zip"),
	}
	for name, data := range cases {
		src := writeTemp(t, "evil-1.0-py3-none-any.whl", data)
		parent := t.TempDir()
		dest := filepath.Join(parent, "out")
		_, err := ExtractWheel(context.Background(), src, dest, archive.DefaultLimits)
		var ce *archive.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: got %v, want an archive.Error", name, err)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("%s: left %d entries behind", name, len(ents))
		}
		if _, err := os.Stat(filepath.Join(parent, "..", "escape.txt")); err == nil {
			t.Errorf("%s: wrote outside", name)
		}
	}
	// Caps.
	src := writeTemp(t, "evil-1.0-py3-none-any.whl", zipOf(t, func(zw *zip.Writer) {
		addFile(zw, "evil-1.0.dist-info/METADATA", meta)
		addFile(zw, "evil/big", strings.Repeat("x", 2000))
	}))
	for _, lim := range []archive.Limits{{MaxEntries: 1, MaxBytes: 1 << 20, Ratio: 100, Allowance: 1 << 20},
		{MaxEntries: 10, MaxBytes: 1000, Ratio: 100, Allowance: 1 << 20},
		{MaxEntries: 10, MaxBytes: 1 << 20, Ratio: 1, Allowance: 100}} {
		if _, err := ExtractWheel(context.Background(), src, filepath.Join(t.TempDir(), "o"), lim); err == nil {
			t.Errorf("limits %+v not enforced", lim)
		}
	}
}

func tgzOf(t *testing.T, hdrs []*tar.Header, bodies []string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for i, h := range hdrs {
		h.Size = int64(len(bodies[i]))
		if h.Typeflag == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(bodies[i]))
		}
	}
	tw.Close()
	gz.Close()
	return buf.Bytes()
}

func TestExtractSdist(t *testing.T) {
	data := fakeindex.BuildSdist(fakeindex.Package{Name: "thing", Version: "2.0", Files: map[string]string{"thing/SYMPOSIUM.toml": "name = \"t\"\n"}})
	src := writeTemp(t, "thing-2.0.tar.gz", data)
	dest := filepath.Join(t.TempDir(), "out")
	info, err := ExtractSdist(context.Background(), src, dest, archive.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if info.Base != "thing-2.0" || info.Metadata.Version != "2.0" {
		t.Errorf("%+v", info)
	}
	if _, err := os.Stat(filepath.Join(dest, "thing-2.0", "thing", "SYMPOSIUM.toml")); err != nil {
		t.Error(err)
	}
	for name, data := range map[string][]byte{
		"dotdot":  tgzOf(t, []*tar.Header{{Name: "x-1/PKG-INFO"}, {Name: "x-1/../../e"}}, []string{meta, "x"}),
		"symlink": tgzOf(t, []*tar.Header{{Name: "x-1/PKG-INFO"}, {Name: "x-1/l", Typeflag: tar.TypeSymlink, Linkname: "/etc"}}, []string{meta, ""}),
		"device":  tgzOf(t, []*tar.Header{{Name: "x-1/PKG-INFO"}, {Name: "x-1/d", Typeflag: tar.TypeChar}}, []string{meta, ""}),
		"no info": tgzOf(t, []*tar.Header{{Name: "x-1/setup.py"}}, []string{""}),
		"not gz":  []byte("nope"),
	} {
		parent := t.TempDir()
		_, err := ExtractSdist(context.Background(), writeTemp(t, "x-1.tar.gz", data), filepath.Join(parent, "o"), archive.DefaultLimits)
		var ce *archive.Error
		if !errors.As(err, &ce) {
			t.Errorf("%s: got %v", name, err)
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 0 {
			t.Errorf("%s: left files behind", name)
		}
	}
}

func TestFilenames(t *testing.T) {
	if d, v, tags, ok := ParseFilename("foo_bar-1.0-1-py2.py3-none-any.whl"); !ok || d != "foo_bar" || v != "1.0" || Rank(tags) != 0 {
		t.Errorf("%q %q %v %v", d, v, tags, ok)
	}
	if _, _, tags, _ := ParseFilename("x-1-cp311-cp311-manylinux_2_17_x86_64.whl"); Rank(tags) != 2 {
		t.Error("platform wheel ranked pure")
	}
	if _, _, tags, _ := ParseFilename("x-1-py2-none-any.whl"); Rank(tags) != 1 {
		t.Error("py2 wheel rank")
	}
	if d, v, ok := ParseSdistFilename("foo-bar-1.0.tar.gz"); !ok || d != "foo-bar" || v != "1.0" {
		t.Errorf("sdist %q %q", d, v)
	}
}

// FuzzExtractWheel builds a wheel from fuzzed parts (entry names, one per
// line, with modes; METADATA, RECORD and entry_points.txt) and extracts
// it: extraction either fails with an archive content error leaving
// nothing, or succeeds with only regular files and directories inside its
// destination. The parts are short strings rather than raw zip bytes: the
// zip container is the standard library's, the rules are ours, and the
// fuzzer's minimization, quadratic in an input's length, stays cheap, so
// that it runs thousands of inputs in 10 s.
func FuzzExtractWheel(f *testing.F) {
	f.Add("a/x\na/y.py", "Name: a\nVersion: 1\n", "", "", uint32(0))
	f.Add("a/x", "Name: a\nVersion: 1\n", "a/x,sha256=AAAA,1\n", "[symposium]\na = a\n", uint32(0))
	f.Add("../x\na/X\na/x", "Name: a\nVersion: 1\n", "", "", uint32(0o755))
	f.Add("a/l", "Name: a\nVersion: 1\n", "", "", uint32(fs.ModeSymlink|0o777))
	// One directory for every input: a fresh temporary directory per
	// input costs more than most inputs' extraction.
	base := f.TempDir()
	f.Fuzz(func(t *testing.T, names, metadata, record, entryPoints string, mode uint32) {
		var buf bytes.Buffer
		zw := zip.NewWriter(&buf)
		add := func(name, body string, m fs.FileMode) {
			h := &zip.FileHeader{Name: name, Method: zip.Deflate}
			if m != 0 {
				h.SetMode(m)
			}
			if w, err := zw.CreateHeader(h); err == nil {
				w.Write([]byte(body))
			}
		}
		add("a-1.dist-info/METADATA", metadata, 0)
		if record != "" {
			add("a-1.dist-info/RECORD", record, 0)
		}
		if entryPoints != "" {
			add("a-1.dist-info/entry_points.txt", entryPoints, 0)
		}
		for i, n := range strings.Split(names, "\n") {
			m := fs.FileMode(0)
			if i == 0 {
				m = fs.FileMode(mode)
			}
			add(n, "x", m)
		}
		if err := zw.Close(); err != nil {
			return
		}
		src, err := os.CreateTemp(base, "a-1-py3-none-any-*.whl")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(src.Name())
		src.Write(buf.Bytes())
		dest := src.Name() + ".out"
		defer os.RemoveAll(dest)
		lim := archive.Limits{MaxEntries: 100, MaxBytes: 4 << 20, Ratio: 100, Allowance: 1 << 20}
		_, err = ExtractWheelFile(context.Background(), src, "a-1-py3-none-any.whl", dest, lim)
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
			return nil
		})
	})
}
