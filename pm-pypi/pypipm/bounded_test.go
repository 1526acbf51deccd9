package pypipm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile/pkgfiletest"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestWorkspaceBoundedReads: a workspace input that is a FIFO or over its
// cap (pyproject.toml, requirements.txt, uv.lock, poetry.lock) is refused
// at once: list_deps passes over it with a warning naming the file and
// why, and workspace fails naming it. With os.ReadFile (os.Open for
// poetry.lock), a FIFO waited for a writer forever and an oversize file
// was read whole.
func TestWorkspaceBoundedReads(t *testing.T) {
	const fifo = "not a regular file (a FIFO)"
	bigManifest := "1048577 bytes, over the size cap of 1048576 bytes"
	bigLock := "268435457 bytes, over the size cap of 268435456 bytes"
	for _, tc := range []struct {
		file   string
		kind   string // "fifo", or "big": one byte over the cap
		cap    int64
		method string
		want   string // the warning's (or error's) words
	}{
		{"pyproject.toml", "fifo", 0, protocol.MethodListDeps, fifo},
		{"pyproject.toml", "big", pkgfile.MaxManifest, protocol.MethodListDeps, bigManifest},
		{"pyproject.toml", "fifo", 0, protocol.MethodWorkspace, fifo},
		{"requirements.txt", "fifo", 0, protocol.MethodListDeps, fifo},
		{"requirements.txt", "big", pkgfile.MaxManifest, protocol.MethodListDeps, bigManifest},
		{"uv.lock", "fifo", 0, protocol.MethodListDeps, fifo},
		{"uv.lock", "big", pkgfile.MaxLockfile, protocol.MethodListDeps, bigLock},
		{"poetry.lock", "fifo", 0, protocol.MethodListDeps, fifo},
		{"poetry.lock", "big", pkgfile.MaxLockfile, protocol.MethodListDeps, bigLock},
	} {
		t.Run(tc.file+" "+tc.kind+" "+tc.method, func(t *testing.T) {
			ws := t.TempDir()
			files := map[string]string{
				"pyproject.toml":   "[project]\nname = \"app\"\nversion = \"1.0\"\ndependencies = [\"left\"]\n",
				"requirements.txt": "left==1.2.0\n",
			}
			delete(files, tc.file)
			for name, content := range files {
				if err := os.WriteFile(filepath.Join(ws, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join(ws, tc.file)
			pkgfiletest.Make(t, path, pkgfiletest.Kind(tc.kind), tc.cap)
			c, err := host.NewLocal(t.Context(), New(), host.Options{Workspace: ws, CacheDir: t.TempDir(), Env: testEnv(t, nil)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			type answer struct {
				diags []protocol.Diagnostic
				err   error
			}
			done := make(chan answer, 1)
			go func() {
				var out any
				diags, err := c.CallDiagnostics(t.Context(), tc.method, struct{}{}, &out)
				done <- answer{diags, err}
			}()
			var a answer
			select {
			case a = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("%s still blocked on %s after 5 s", tc.method, tc.file)
			}
			if tc.method == protocol.MethodWorkspace {
				if a.err == nil || !strings.Contains(a.err.Error(), path+": "+tc.want) {
					t.Fatalf("workspace: %v, want an error naming %s: %s", a.err, path, tc.want)
				}
				return
			}
			if a.err != nil {
				t.Fatalf("list_deps: %v, want %s passed over with a warning", a.err, tc.file)
			}
			for _, d := range a.diags {
				if d.File == path && strings.Contains(d.Message, tc.want) {
					return
				}
			}
			t.Fatalf("list_deps diagnostics %+v, want one on %s saying %q", a.diags, path, tc.want)
		})
	}
}
