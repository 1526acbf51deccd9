package npmpm

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile/pkgfiletest"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// TestListDepsBoundedReads: a workspace input that is a FIFO or over its
// cap (package.json, a lockfile) makes list_deps fail at once with an
// error naming the file; a pnpm-workspace.yaml that is one is passed
// over. With os.ReadFile, a FIFO waited for a writer forever and an
// oversize file was read whole.
func TestListDepsBoundedReads(t *testing.T) {
	for _, tc := range []struct {
		file string
		kind string // "fifo", or "big": one byte over the cap
		cap  int64
		err  error // nil: list_deps succeeds
	}{
		{"package.json", "fifo", 0, pkgfile.ErrNotRegular},
		{"package.json", "big", pkgfile.MaxManifest, pkgfile.ErrTooLarge},
		{"package-lock.json", "fifo", 0, pkgfile.ErrNotRegular},
		{"package-lock.json", "big", pkgfile.MaxLockfile, pkgfile.ErrTooLarge},
		{"npm-shrinkwrap.json", "fifo", 0, pkgfile.ErrNotRegular},
		{"yarn.lock", "fifo", 0, pkgfile.ErrNotRegular},
		{"pnpm-lock.yaml", "big", pkgfile.MaxLockfile, pkgfile.ErrTooLarge},
		{"pnpm-workspace.yaml", "fifo", 0, nil},
		{"pnpm-workspace.yaml", "big", pkgfile.MaxManifest, nil},
	} {
		t.Run(tc.file+" "+tc.kind, func(t *testing.T) {
			ws := t.TempDir()
			files := map[string]string{"node_modules/left/package.json": `{"name":"left","version":"1.2.0"}`}
			if tc.file != "package.json" {
				files["package.json"] = `{"name":"app","version":"1.0.0","dependencies":{"left":"^1.0.0"}}`
			}
			writeFiles(t, ws, files)
			pkgfiletest.Make(t, filepath.Join(ws, tc.file), pkgfiletest.Kind(tc.kind), tc.cap)
			p, _ := newPM(t, ws, nil)
			done := make(chan error, 1)
			go func() {
				_, err := p.ListDeps(context.Background())
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("list_deps still blocked on %s after 5 s", tc.file)
			}
			if tc.err == nil {
				if err != nil {
					t.Fatalf("list_deps: %v, want it to pass over %s", err, tc.file)
				}
				return
			}
			if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), filepath.Join(ws, tc.file)) {
				t.Fatalf("list_deps: %v, want %v naming %s", err, tc.err, tc.file)
			}
		})
	}
}
