package tarball

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
)

func TestExtract(t *testing.T) {
	dir := t.TempDir()
	tgz := fakeregistry.Tarball(
		fakeregistry.Entry{Name: "pax_global_header", Type: tar.TypeXGlobalHeader},
		fakeregistry.Entry{Name: "package/package.json", Body: `{"name":"x"}`},
		fakeregistry.Entry{Name: "package/bin/run", Body: "#!/bin/sh\n", Mode: 0o755},
		fakeregistry.Entry{Name: "package/deep/er/file.txt", Body: "hi"}, // no directory entries
		fakeregistry.Entry{Name: "toplevel-file", Body: "dropped"},
	)
	if err := Extract(bytes.NewReader(tgz), dir, DefaultLimits); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "deep/er/file.txt")); string(b) != "hi" {
		t.Errorf("nested file: %q", b)
	}
	if fi, err := os.Stat(filepath.Join(dir, "bin/run")); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("executable: %v %v", fi, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "toplevel-file")); err == nil {
		t.Error("top-level file kept")
	}
}

func TestExtractRefuses(t *testing.T) {
	big := strings.Repeat("x", 2048)
	for name, tc := range map[string]struct {
		entries []fakeregistry.Entry
		lim     Limits
		detail  string
	}{
		"dotdot":    {[]fakeregistry.Entry{{Name: "package/../../x", Body: "x"}}, DefaultLimits, "escapes"},
		"absolute":  {[]fakeregistry.Entry{{Name: "/etc/x", Body: "x"}}, DefaultLimits, "absolute"},
		"symlink":   {[]fakeregistry.Entry{{Name: "package/l", Type: tar.TypeSymlink, Linkname: "../../etc"}}, DefaultLimits, "link"},
		"hardlink":  {[]fakeregistry.Entry{{Name: "package/l", Type: tar.TypeLink, Linkname: "package/a"}}, DefaultLimits, "link"},
		"fifo":      {[]fakeregistry.Entry{{Name: "package/f", Type: tar.TypeFifo}}, DefaultLimits, "special"},
		"file size": {[]fakeregistry.Entry{{Name: "package/big", Body: big}}, Limits{MaxBytes: 1 << 20, MaxFileBytes: 1024, MaxEntries: 10}, "cap"},
		"total":     {[]fakeregistry.Entry{{Name: "package/a", Body: big}, {Name: "package/b", Body: big}}, Limits{MaxBytes: 3000, MaxFileBytes: 1 << 20, MaxEntries: 10}, "cap"},
		"entries":   {[]fakeregistry.Entry{{Name: "package/a"}, {Name: "package/b"}, {Name: "package/c"}}, Limits{MaxBytes: 1 << 20, MaxFileBytes: 1 << 20, MaxEntries: 2}, "entries"},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			err := Extract(bytes.NewReader(fakeregistry.Tarball(tc.entries...)), dir, tc.lim)
			var ce *ContentError
			if !errors.As(err, &ce) || !strings.Contains(ce.Detail, tc.detail) {
				t.Errorf("err %v, want a ContentError mentioning %q", err, tc.detail)
			}
		})
	}
	tgz := fakeregistry.Tarball(fakeregistry.Entry{Name: "package/a", Body: strings.Repeat("y", 10000)})
	var ce *ContentError
	if err := Extract(bytes.NewReader(tgz[:len(tgz)/2]), t.TempDir(), DefaultLimits); !errors.As(err, &ce) {
		t.Errorf("truncated: %v", err)
	}
	if err := Extract(strings.NewReader("not gzip"), t.TempDir(), DefaultLimits); !errors.As(err, &ce) {
		t.Errorf("not gzip: %v", err)
	}
}

func FuzzExtract(f *testing.F) {
	f.Add(fakeregistry.Tarball(fakeregistry.Entry{Name: "package/package.json", Body: "{}"}))
	f.Add(fakeregistry.Tarball(fakeregistry.Entry{Name: "package/../x", Body: "x"}))
	f.Add(fakeregistry.Tarball(fakeregistry.Entry{Name: "package/l", Type: tar.TypeSymlink, Linkname: "/"}))
	for _, h := range fakeregistry.HostileTarballs() {
		if len(h.Tgz) < 64<<10 { // not the bombs: too big to mutate usefully
			f.Add(h.Tgz)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		dir := filepath.Join(parent, "out")
		os.Mkdir(dir, 0o755)
		err := Extract(bytes.NewReader(data), dir, Limits{MaxBytes: 1 << 20, MaxFileBytes: 1 << 20, MaxEntries: 100})
		ents, _ := os.ReadDir(parent)
		if len(ents) != 1 {
			t.Fatalf("extraction wrote outside its directory: %v", ents)
		}
		// Whatever the archive holds, a failure is the archive's fault
		// (-32014 for the PM), never an internal error.
		var ce *ContentError
		if err != nil && !errors.As(err, &ce) {
			t.Fatalf("not a ContentError: %v", err)
		}
	})
}
