package cargopm

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// rawPathError matches a Go *fs.PathError's own wording ("stat /x: no such
// file or directory"), which a PM must not pass on as its message.
var rawPathError = regexp.MustCompile(`\b(stat|lstat|open|mkdir|rename|remove|unlinkat|readdirent) /[^ ]*: `)

// TestCacheDirDeletedMidDownload is issue 14 item 14 for cargo: cache_dir is
// removed while cargo is half-way through downloading (the registry stalls
// after half the archive). The fetch then succeeds, or fails with -32603
// saying in words what happened to which path, never with a raw "stat …"
// message nor as a registry or content error; the next fetch succeeds.
func TestCacheDirDeletedMidDownload(t *testing.T) {
	e := newFaultEnv(t)
	release := make(chan struct{})
	stalled := e.reg.StallDownloads(release)
	pm := e.start(t)
	pm.Send("fetch", pkgParams("big", "1", "fetch"))
	select {
	case <-stalled:
	case <-time.After(60 * time.Second):
		t.Fatalf("the download never started; stderr:\n%s", pm.Stderr())
	}
	if err := os.RemoveAll(e.cacheDir); err != nil {
		t.Fatal(err)
	}
	e.reg.StallDownloads(nil)
	close(release)
	r := pm.Next()
	switch {
	case r.Code() == 0:
	case r.Code() != -32603:
		t.Errorf("fetch with cache_dir removed mid-download: %s; want success or -32603", r.Raw)
	case !strings.Contains(r.Raw, e.cacheDir):
		t.Errorf("fetch with cache_dir removed mid-download: %s; want the path named", r.Raw)
	case rawPathError.MatchString(r.Raw):
		t.Errorf("fetch with cache_dir removed mid-download: %s; want the failure in words, not a raw system message", r.Raw)
	}
	t.Logf("fetch with cache_dir removed mid-download: %s", r.Raw)
	if r := pm.Call("fetch", pkgParams("big", "1", "fetch")); r.Code() != 0 {
		t.Errorf("the next fetch: %s\nstderr:\n%s", r.Raw, pm.Stderr())
	}
}
