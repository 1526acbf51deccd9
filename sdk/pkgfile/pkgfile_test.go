package pkgfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("secret"), 0o644)
	os.WriteFile(filepath.Join(dir, "ok.toml"), []byte("name = 'x'\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2<<20), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "in"), []byte("inside"), 0o644)
	os.Symlink("sub/in", filepath.Join(dir, "link-in"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link-out"))
	os.Symlink("../"+filepath.Base(outside)+"/secret", filepath.Join(dir, "link-out-rel"))
	os.Symlink("/dev/zero", filepath.Join(dir, "zero"))
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	for _, tc := range []struct {
		name string
		want string // content, or the error it must wrap
		err  error
	}{
		{"ok.toml", "name = 'x'\n", nil},
		{"sub/in", "inside", nil},
		{"link-in", "inside", nil},
		{"absent", "", fs.ErrNotExist},
		{"dangling", "", fs.ErrNotExist},
		{"big", "", ErrTooLarge},
		{"sub", "", ErrNotRegular},
		{"link-out", "", ErrOutside},
		{"link-out-rel", "", ErrOutside},
		{"zero", "", ErrOutside},
	} {
		data, err := ReadFile(dir, tc.name, MaxManifest)
		if tc.err == nil {
			if err != nil || string(data) != tc.want {
				t.Errorf("%s: %q, %v", tc.name, data, err)
			}
			continue
		}
		if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), filepath.Join(dir, tc.name)) {
			t.Errorf("%s: err = %v, want %v naming the file", tc.name, err, tc.err)
		}
		// Cause keeps the reason and drops the path.
		if c := Cause(err); c == "" || strings.Contains(c, dir) {
			t.Errorf("%s: Cause = %q, want the reason without the path", tc.name, c)
		}
	}
}

// TestCause: the reasons a read fails, each without the file's path.
func TestCause(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "big"), make([]byte, 2<<20), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("/etc/passwd", filepath.Join(dir, "out"))
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	for name, want := range map[string]string{
		"big":     "2097152 bytes, over the size cap of 1048576 bytes",
		"sub":     "not a regular file (a directory)",
		"out":     "a link leading out of the package",
		"file/in": "not a directory",
	} {
		_, err := ReadFile(dir, name, MaxManifest)
		if got := Cause(err); got != want {
			t.Errorf("%s: Cause = %q (of %v), want %q", name, got, err, want)
		}
	}
}

// TestReadFIFO: a FIFO is refused at once, never waited on.
func TestReadFIFO(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, "SYMPOSIUM.toml"), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(dir, "SYMPOSIUM.toml", MaxManifest)
		done <- err
	}()
	err := <-done // a hang here is the bug this guards against
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
		t.Fatalf("err = %v", err)
	}
}

// TestOpen: Open applies the same rules without a size cap.
func TestOpen(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "METADATA"), make([]byte, 2<<20), 0o644)
	os.Symlink("/etc/passwd", filepath.Join(dir, "out"))
	f, err := Open(dir, "METADATA")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Open(dir, "out"); !errors.Is(err, ErrOutside) {
		t.Errorf("link out: %v", err)
	}
	if _, err := Open(dir, "absent"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v", err)
	}
}
