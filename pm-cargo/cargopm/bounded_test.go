package cargopm

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pkgfile/pkgfiletest"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/pkgfile"
)

// TestWorkspaceBoundedReads: a workspace input that is over its cap
// (Cargo.toml, Cargo.lock, .cargo/config.toml) or a FIFO Cargo.lock makes
// list_deps (or the configuration's load) fail at once with an error
// naming the file and why. A FIFO Cargo.toml or config.toml is not taken
// for one (both are looked for as regular files): the workspace is no
// cargo project, the configuration file is passed over. With os.ReadFile,
// a FIFO waited for a writer forever and an oversize file was read whole.
func TestWorkspaceBoundedReads(t *testing.T) {
	listDeps := func(p *PM) error { _, err := p.ListDeps(context.Background()); return err }
	config := func(p *PM) error { _, err := p.cargoConfig(); return err }
	for _, tc := range []struct {
		file string
		kind string // "fifo", or "big": one byte over the cap
		cap  int64
		call func(*PM) error
		want string // the error's words after the file's path, or "" for none
	}{
		{"Cargo.toml", "fifo", 0, listDeps, ""},
		{"Cargo.toml", "big", pkgfile.MaxManifest, listDeps, "1048577 bytes, over the size cap of 1048576 bytes"},
		{"Cargo.lock", "fifo", 0, listDeps, "not a regular file (a FIFO)"},
		{"Cargo.lock", "big", pkgfile.MaxLockfile, listDeps, "268435457 bytes, over the size cap of 268435456 bytes"},
		{".cargo/config.toml", "fifo", 0, config, ""},
		{".cargo/config.toml", "big", pkgfile.MaxManifest, config, "1048577 bytes, over the size cap of 1048576 bytes"},
	} {
		t.Run(tc.file+" "+tc.kind, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			files := map[string]string{
				"Cargo.toml":         "[package]\nname = \"app\"\nversion = \"0.1.0\"\n\n[dependencies]\nleft = \"1\"\n",
				"Cargo.lock":         "version = 4\n\n[[package]]\nname = \"app\"\nversion = \"0.1.0\"\ndependencies = [\"left\"]\n\n[[package]]\nname = \"left\"\nversion = \"1.2.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n",
				".cargo/config.toml": "[net]\noffline = true\n",
				"src/main.rs":        "fn main() {}\n",
			}
			delete(files, tc.file)
			cargotest.WriteFiles(t, ws, files)
			pkgfiletest.Make(t, filepath.Join(ws, filepath.FromSlash(tc.file)), pkgfiletest.Kind(tc.kind), tc.cap)
			home := t.TempDir()
			p := newPM(t, ws, map[string]string{"HOME": home, "CARGO_HOME": filepath.Join(home, ".cargo"), "CARGO": "/nonexistent/cargo"})
			done := make(chan error, 1)
			go func() { done <- tc.call(p) }()
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("still blocked on %s after 5 s", tc.file)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("%v, want %s passed over", err, tc.file)
				}
				return
			}
			if want := filepath.Join(ws, filepath.FromSlash(tc.file)) + ": " + tc.want; err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%v, want %q", err, want)
			}
		})
	}
}
