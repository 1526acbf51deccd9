package registry

import (
	"context"
	"errors"
	"io/fs"
	"syscall"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/pm-npm/npmrc"
)

// fullDisk fails every write as a full disk does.
type fullDisk struct{}

func (fullDisk) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: "/cache/npm/tmp/dl.tgz", Err: syscall.ENOSPC}
}

// TestDownloadDiskFull: a write failure while downloading is the
// writer's error (ENOSPC with its path), not a registry failure.
func TestDownloadDiskFull(t *testing.T) {
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "x", Version: "1.0.0"})
	c, err := New(npmrc.Load("", envWith{"npm_config_registry": reg.URL(), "HOME": t.TempDir()}), noEnv{}, "test")
	if err != nil {
		t.Fatal(err)
	}
	p, err := c.Packument(context.Background(), "x")
	if err != nil {
		t.Fatal(err)
	}
	err = c.Download(context.Background(), p.Versions["1.0.0"].Dist.Tarball, fullDisk{})
	var he *HTTPError
	if errors.As(err, &he) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v (%T), want the writer's ENOSPC", err, err)
	}
}
