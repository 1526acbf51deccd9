package config

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkLoad is what every hook pays for the configuration: a user file
// and a workspace file, both small, read (through pkgfile) and parsed.
func BenchmarkLoad(b *testing.B) {
	home, ws := b.TempDir(), b.TempDir()
	for p, data := range map[string]string{
		filepath.Join(home, FileName):    "[plugins]\ndisable = [\"a\"]\n",
		filepath.Join(ws, WorkspaceFile): "[plugins]\ndisable = [\"b\"]\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	env := func(k string) string { return map[string]string{"SYMPOSIUM_HOME": home}[k] }
	for b.Loop() {
		if c, err := Load(env, ws); err != nil || len(c.Plugins.Disable) != 2 {
			b.Fatalf("Load: %v", err)
		}
	}
}
