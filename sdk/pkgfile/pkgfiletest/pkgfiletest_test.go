package pkgfiletest

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// TestMake: what Make makes, pkgfile refuses for the reason it stands for.
func TestMake(t *testing.T) {
	dir := t.TempDir()
	for kind, want := range map[Kind]error{FIFO: pkgfile.ErrNotRegular, DevZero: pkgfile.ErrNotRegular, Oversize: pkgfile.ErrTooLarge} {
		path := filepath.Join(dir, string(kind), "f")
		Make(t, path, kind, 100)
		if _, err := pkgfile.ReadUserFile(path, 100); !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", kind, err, want)
		}
	}
}
