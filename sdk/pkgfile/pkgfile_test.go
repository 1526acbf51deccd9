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
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile/pkgfiletest"
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
	os.Symlink(outside, filepath.Join(dir, "dir-out"))
	os.Symlink("sub", filepath.Join(dir, "dir-in"))
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
		{"dir-in/in", "inside", nil},
		{"dir-out/secret", "", ErrOutside}, // a link to a directory out of the package
		{"dir-out/absent", "", ErrOutside}, // whether or not the file is there
		{"sub/../dir-out/secret", "", ErrOutside},
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
	os.Symlink("/etc", filepath.Join(dir, "via"))
	for name, want := range map[string]string{
		"big":     "2097152 bytes, over the size cap of 1048576 bytes",
		"sub":     "not a regular file (a directory)",
		"out":     "a link leading out of the package",
		"file/in": "not a directory",
		"via/x":   "a link leading out of the package",
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

// TestReadUserFile: a user's file is read through links wherever they
// lead, and a FIFO, a device, a directory or an oversize file is refused
// at once with an error naming the file (and what a link leads to).
func TestReadUserFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir, dotfiles := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(dotfiles, "Cargo.lock"), []byte("version = 4\n"), 0o644)
	os.Symlink(filepath.Join(dotfiles, "Cargo.lock"), filepath.Join(dir, "linked.lock"))
	os.WriteFile(filepath.Join(dir, "big.lock"), make([]byte, 4097), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.lock"))
	os.Symlink("nowhere", filepath.Join(dir, "dangling.lock"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.lock"), 0o644); err != nil {
		t.Skip(err)
	}
	os.Symlink("fifo.lock", filepath.Join(dir, "to-fifo.lock"))
	for _, tc := range []struct {
		name, want string // want: the content, or the error's words after the path
		err        error
	}{
		{"linked.lock", "version = 4\n", nil},
		{"absent.lock", "file does not exist", fs.ErrNotExist},
		{"dangling.lock", "file does not exist", fs.ErrNotExist},
		{"big.lock", "4097 bytes, over the size cap of 4096 bytes", ErrTooLarge},
		{"sub", "not a regular file (a directory)", ErrNotRegular},
		{"fifo.lock", "not a regular file (a FIFO)", ErrNotRegular},
		{"to-fifo.lock", "a link to " + filepath.Join(dir, "fifo.lock") + ": not a regular file (a FIFO)", ErrNotRegular},
		{"zero.lock", "a link to /dev/zero: not a regular file (a character device)", ErrNotRegular},
	} {
		done := make(chan struct{})
		var data []byte
		var err error
		go func() {
			defer close(done)
			data, err = ReadUserFile(filepath.Join(dir, tc.name), 4096)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadUserFile still blocked after 5 s", tc.name)
		}
		if tc.err == nil {
			if err != nil || string(data) != tc.want {
				t.Errorf("%s: %q, %v", tc.name, data, err)
			}
			continue
		}
		if want := filepath.Join(dir, tc.name) + ": " + tc.want; !errors.Is(err, tc.err) || err.Error() != want {
			t.Errorf("%s: err = %v, want %q wrapping %v", tc.name, err, want, tc.err)
		}
	}
	// os.DevNull itself is the empty file it is to git and npm; a link to
	// another device is not.
	if data, err := ReadUserFile(os.DevNull, 4096); err != nil || len(data) != 0 {
		t.Errorf("%s: %q, %v; want empty", os.DevNull, data, err)
	}
}

// TestOpenUserFile: OpenUserFile refuses what ReadUserFile refuses, with
// the same errors, and returns the size of what it opened.
func TestOpenUserFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.lock"), []byte("12345"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.lock"), make([]byte, 4097), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.lock"), 0o644); err != nil {
		t.Skip(err)
	}
	f, size, err := OpenUserFile(filepath.Join(dir, "ok.lock"), 4096)
	if err != nil || size != 5 {
		t.Fatalf("ok.lock: %d bytes, %v", size, err)
	}
	f.Close()
	for name, want := range map[string]string{
		"big.lock":  "4097 bytes, over the size cap of 4096 bytes",
		"fifo.lock": "not a regular file (a FIFO)",
	} {
		done := make(chan error, 1)
		go func() {
			f, _, err := OpenUserFile(filepath.Join(dir, name), 4096)
			if err == nil {
				f.Close()
			}
			done <- err
		}()
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: OpenUserFile still blocked after 5 s", name)
		}
		if w := filepath.Join(dir, name) + ": " + want; err == nil || err.Error() != w {
			t.Errorf("%s: %v, want %q", name, err, w)
		}
	}
}

// TestReadOwnFile: ReadOwnFile reads a regular file and refuses a FIFO at
// once, an oversize file before reading it, each naming the file.
func TestReadOwnFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "entry"), []byte("12345"), 0o644)
	os.WriteFile(filepath.Join(dir, "big"), make([]byte, 4097), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Skip(err)
	}
	if data, err := ReadOwnFile(filepath.Join(dir, "entry"), 4096); err != nil || string(data) != "12345" {
		t.Fatalf("entry: %q, %v", data, err)
	}
	if _, err := ReadOwnFile(filepath.Join(dir, "absent"), 4096); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v, want fs.ErrNotExist", err)
	}
	for name, want := range map[string]string{
		"big":  "4097 bytes, over the size cap of 4096 bytes",
		"fifo": "not a regular file (a FIFO)",
	} {
		done := make(chan error, 1)
		go func() {
			_, err := ReadOwnFile(filepath.Join(dir, name), 4096)
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: ReadOwnFile still blocked after 5 s", name)
		}
		if w := filepath.Join(dir, name) + ": " + want; err == nil || err.Error() != w {
			t.Errorf("%s: %v, want %q", name, err, w)
		}
	}
}

// TestOpenOwnFile: OpenOwnFile opens a regular file and returns its size;
// it refuses a FIFO and a link to a device at once, and an oversize file
// before anything is read, each with ReadOwnFile's error naming the file.
func TestOpenOwnFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "entry"), []byte("12345"), 0o644)
	f, size, err := OpenOwnFile(filepath.Join(dir, "entry"), 5)
	if err != nil || size != 5 {
		t.Fatalf("entry: %d bytes, %v", size, err)
	}
	f.Close()
	if _, _, err := OpenOwnFile(filepath.Join(dir, "absent"), 5); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("absent: %v, want fs.ErrNotExist", err)
	}
	for _, tc := range []struct {
		kind pkgfiletest.Kind
		want string
		err  error
	}{
		{pkgfiletest.FIFO, "not a regular file (a FIFO)", ErrNotRegular},
		{pkgfiletest.DevZero, "not a regular file (a character device)", ErrNotRegular},
		{pkgfiletest.Oversize, "4097 bytes, over the size cap of 4096 bytes", ErrTooLarge},
	} {
		path := filepath.Join(dir, string(tc.kind))
		pkgfiletest.Make(t, path, tc.kind, 4096)
		var err error
		pkgfiletest.Within(t, "OpenOwnFile of a "+string(tc.kind), func() {
			var f *os.File
			if f, _, err = OpenOwnFile(path, 4096); err == nil {
				f.Close()
			}
		})
		if w := path + ": " + tc.want; !errors.Is(err, tc.err) || err.Error() != w {
			t.Errorf("%s: %v, want %q wrapping %v", tc.kind, err, w, tc.err)
		}
	}
}

// TestReadAllocatesOnce checks that a file is read into one buffer of its
// size: io.ReadAll, growing from 512 bytes, allocated about 2.4 times the
// size of a large lockfile, which set a cold hook's peak memory.
func TestReadAllocatesOnce(t *testing.T) {
	dir := t.TempDir()
	const size = 4 << 20
	want := []byte(strings.Repeat("0123456789abcdef", size/16))
	if err := os.WriteFile(filepath.Join(dir, "Cargo.lock"), want, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		read func() ([]byte, error)
	}{
		{"ReadFile", func() ([]byte, error) { return ReadFile(dir, "Cargo.lock", 8<<20) }},
		{"ReadUserFile", func() ([]byte, error) { return ReadUserFile(filepath.Join(dir, "Cargo.lock"), 8<<20) }},
		{"ReadOwnFile", func() ([]byte, error) { return ReadOwnFile(filepath.Join(dir, "Cargo.lock"), 8<<20) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := tc.read()
			runtime.ReadMemStats(&after)
			if err != nil || string(got) != string(want) {
				t.Fatalf("read %d bytes, err %v; want the %d bytes written", len(got), err, size)
			}
			if n := after.TotalAlloc - before.TotalAlloc; n > size*5/4 {
				t.Errorf("reading a %d-byte file allocated %d bytes, want at most %d (one buffer of its size)", size, n, size*5/4)
			}
		})
	}
}
