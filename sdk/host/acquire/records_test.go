//go:build unix

package acquire

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The receipt and the remembered failure are read back from the cache,
// which every PM is handed and may write in, with bounds (sdk/pkgfile): a
// FIFO there is refused at once (os.ReadFile and os.Open waited for a
// writer forever) and so is a file over 1 MiB; a receipt that cannot be
// read is an error naming its directory and the cause, a failure that
// cannot be read is none remembered.
func TestRecordsBounded(t *testing.T) {
	src := Source{PM: "p", Kind: Go, Module: "example.com/p", Version: "v1.0.0"}
	big := `{"pad":"` + strings.Repeat(" ", maxRecord) + `"}`
	for name, tc := range map[string]struct {
		fifo  bool
		data  string
		cause string
	}{
		"FIFO":       {fifo: true, cause: ReceiptFile + ": not a regular file (a FIFO)"},
		"over 1 MiB": {data: big, cause: ReceiptFile + ": 1048586 bytes, over the size cap of 1048576 bytes"},
	} {
		t.Run(name, func(t *testing.T) {
			cache := t.TempDir()
			write := func(p string) {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				var err error
				if tc.fifo {
					err = syscall.Mkfifo(p, 0o644)
				} else {
					err = os.WriteFile(p, []byte(tc.data), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			write(filepath.Join(Dir(cache, src), ReceiptFile))
			write(failureFile(cache, src))
			_, err := Installed(cache, src)
			if err == nil || errors.Is(err, ErrNotAcquired) || !strings.HasPrefix(err.Error(), "reading "+Dir(cache, src)+": ") || !strings.HasSuffix(err.Error(), tc.cause) {
				t.Errorf("Installed: %v, want an error naming %s and ending %q", err, Dir(cache, src), tc.cause)
			}
			if f := LastFailure(cache, src); f != nil {
				t.Errorf("LastFailure: %+v, want none", f)
			}
		})
	}
}

// cargo's install record is read with the same bounds: a FIFO is refused
// at once (os.ReadFile waited for a writer forever), naming the file.
func TestCargoRecordBounded(t *testing.T) {
	root := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(root, ".crates2.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := cargoInstalledVersion(root, "tiny-pm")
	if want := "cargo's install record: " + filepath.Join(root, ".crates2.json") + ": not a regular file (a FIFO)"; err == nil || err.Error() != want {
		t.Errorf("cargoInstalledVersion: %v, want %q", err, want)
	}
}
