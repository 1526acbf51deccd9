package npmpm

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-npm/internal/fakeregistry"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestFetchDiskFull: a full disk while the tarball downloads is -32603
// saying "no space left on device writing <path>", not a registry error
// nor invalid content. The download file is a link to /dev/full, whose
// every write fails with ENOSPC.
func TestFetchDiskFull(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/dev/full is Linux's")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip(err)
	}
	reg := fakeregistry.New()
	defer reg.Close()
	reg.Publish(fakeregistry.Version{Name: "x", Version: "1.0.0", Files: map[string]string{"index.js": "x"}})
	p, _ := newPM(t, t.TempDir(), map[string]string{"npm_config_registry": reg.URL()})
	full := filepath.Join(t.TempDir(), "download.tgz")
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Fatal(err)
	}
	p.createTemp = func(string, string) (*os.File, error) { return os.OpenFile(full, os.O_RDWR, 0) }
	_, err := p.Fetch(context.Background(), npmID("x", "1.0.0"), protocol.UpdateFetch)
	if protocol.CodeOf(err) != protocol.CodeInternalError || !strings.Contains(err.Error(), "no space left on device writing "+full) {
		t.Fatalf("err = %v (code %d), want -32603 naming the full disk and %s", err, protocol.CodeOf(err), full)
	}
	if fi, err := os.Lstat("/dev/full"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("/dev/full is gone: %v", err)
	}
}
