package pypipm

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestFetchDiskFull: a full disk while a distribution downloads is -32603
// "no space left on device writing <path>", not -32014 invalid content.
// The download file is a link to /dev/full, whose every write fails with
// ENOSPC.
func TestFetchDiskFull(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/dev/full is Linux's")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip(err)
	}
	ix := demoIndex(t)
	p := newPM(t, t.TempDir(), t.TempDir(), map[string]string{"PIP_INDEX_URL": ix.URL})
	full := filepath.Join(t.TempDir(), "download.whl")
	if err := os.Symlink("/dev/full", full); err != nil {
		t.Fatal(err)
	}
	p.createTemp = func(string, string) (*os.File, error) { return os.OpenFile(full, os.O_RDWR, 0) }
	_, err := p.Fetch(context.Background(), id("demo-plugin", "*"), protocol.UpdateFetch)
	if code(err) != protocol.CodeInternalError || !strings.Contains(err.Error(), "no space left on device writing "+full) {
		t.Fatalf("err = %v (code %d), want -32603 naming the full disk and %s", err, code(err), full)
	}
	if fi, err := os.Lstat("/dev/full"); err != nil || fi.Mode()&os.ModeDevice == 0 {
		t.Fatalf("/dev/full is gone: %v", err)
	}
}

// TestCacheDeletedMidDownload removes the whole cache directory while a
// wheel is halfway downloaded: the PM unpacks from the download it holds
// into recreated directories and answers with the distribution, rather
// than a bare file-system message or invalid content.
func TestCacheDeletedMidDownload(t *testing.T) {
	ix := demoIndex(t)
	cache := t.TempDir()
	p := newPM(t, t.TempDir(), cache, map[string]string{"PIP_INDEX_URL": ix.URL})
	ix.Stall.Store(true)
	type answer struct {
		res protocol.FetchResult
		err error
	}
	done := make(chan answer, 1)
	go func() {
		res, err := p.Fetch(context.Background(), id("demo-plugin", "*"), protocol.UpdateFetch)
		done <- answer{res, err}
	}()
	select {
	case <-ix.Stalled:
	case <-time.After(time.Minute):
		t.Fatal("the download never started")
	}
	if err := os.RemoveAll(filepath.Join(cache, "pypi")); err != nil {
		t.Fatal(err)
	}
	ix.Unstall()
	a := <-done
	if a.err != nil {
		t.Fatalf("fetch with the cache removed mid-download: %v", a.err)
	}
	if _, err := os.Stat(filepath.Join(a.res.Root, "demo_plugin", "SYMPOSIUM.toml")); err != nil {
		t.Errorf("fetched root %s lacks the distribution's files: %v", a.res.Root, err)
	}
}
