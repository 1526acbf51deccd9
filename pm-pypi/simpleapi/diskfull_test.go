package simpleapi

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-pypi/internal/fakeindex"
)

// fullDisk fails every write as a full disk does.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: "/cache/pypi/tmp/download-x.whl", Err: syscall.ENOSPC}
}

// TestDownloadDiskFull: a write failure while downloading is the writer's
// error (ENOSPC with its path), not an index failure.
func TestDownloadDiskFull(t *testing.T) {
	ix := fakeindex.Start(fakeindex.Package{Name: "demo", Version: "1.0", Files: map[string]string{"demo/x": "y"}})
	defer ix.Close()
	c := NewClient(Config{Index: ix.URL}, noenv, "test")
	p, err := c.Project(context.Background(), "demo")
	if err != nil || len(p.Files) == 0 {
		t.Fatal(p, err)
	}
	_, err = c.Download(context.Background(), p.Files[0], fullDisk{}, 1<<20)
	var re *RegistryError
	if errors.As(err, &re) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v (%T), want the writer's ENOSPC", err, err)
	}
}
