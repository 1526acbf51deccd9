package cargopm

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/pmserver"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// TestLayerDiagnostics: a plugin declaration the PM ignores is reported
// once, naming its file in the diagnostic's file (and line, when the
// decoder knows it), never again inside the message.
func TestLayerDiagnostics(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		file  string // relative to ws/vendor
		line  int
		want  string
	}{
		{"SYMPOSIUM.toml not TOML",
			map[string]string{"ws/vendor/b/SYMPOSIUM.toml": "name = \"b\"\nskills = = 1\n"},
			"b/SYMPOSIUM.toml", 2, "SYMPOSIUM.toml is not valid TOML; it is ignored"},
		{"metadata.symposium not a table",
			map[string]string{"ws/vendor/c/Cargo.toml": "[package]\nname = \"c\"\nversion = \"1.0.0\"\n\n[package.metadata]\nsymposium = \"yes\"\n"},
			"c/Cargo.toml", 0, "[package.metadata.symposium] is not a table; it is ignored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ws, home := cacheWorkspace(t, dir)
			cargotest.WriteFiles(t, dir, tc.files)
			h := pmtest.Hook{New: func() pmserver.PM { return New() }, Options: host.Options{Workspace: ws, CacheDir: t.TempDir(),
				Env: map[string]string{"CARGO_HOME": home, "HOME": home}}}
			diags := h.Run(t).Diagnostics
			file := filepath.Join(ws, "vendor", tc.file)
			n := 0
			for _, d := range diags {
				if d.File != file {
					continue
				}
				n++
				if !strings.HasPrefix(d.Message, tc.want) {
					t.Errorf("message %q, want it to start %q", d.Message, tc.want)
				}
				if strings.Contains(d.Message, file) {
					t.Errorf("message %q names the file again", d.Message)
				}
				if d.Line != tc.line {
					t.Errorf("line %d, want %d", d.Line, tc.line)
				}
			}
			if n != 1 {
				t.Errorf("%d diagnostics about %s, want 1: %+v", n, file, diags)
			}
		})
	}
}
