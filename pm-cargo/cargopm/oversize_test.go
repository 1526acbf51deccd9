package cargopm

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/pm-cargo/internal/cargotest"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
)

// TestOversizeManifestSkipsOneCrate: a vendored crate whose SYMPOSIUM.toml
// is over the 1 MiB manifest cap (2 MiB here) is refused with a warning
// naming it, and the other crates' plugins are still offered.
func TestOversizeManifestSkipsOneCrate(t *testing.T) {
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	cargotest.WriteFiles(t, dir, map[string]string{
		"ws/Cargo.toml":                    "[package]\nname = \"app\"\nversion = \"0.1.0\"\n",
		"ws/.cargo/config.toml":            "[source.crates-io]\nreplace-with = \"vendored\"\n\n[source.vendored]\ndirectory = \"vendor\"\n",
		"ws/vendor/huge/Cargo.toml":        "[package]\nname = \"huge\"\nversion = \"0.1.0\"\n",
		"ws/vendor/huge/SYMPOSIUM.toml":    "name = \"" + strings.Repeat("h", 2<<20) + "\"\n",
		"ws/vendor/fine/Cargo.toml":        "[package]\nname = \"fine\"\nversion = \"0.1.0\"\n",
		"ws/vendor/fine/SYMPOSIUM.toml":    "name = \"fine-plugin\"\n",
		"ws/vendor/bigtoml/Cargo.toml":     "[package]\nname = \"bigtoml\"\nversion = \"0.1.0\"\n# " + strings.Repeat("c", 2<<20) + "\n[package.metadata.symposium]\nname = \"big\"\n",
		"ws/vendor/bigtoml/SYMPOSIUM.toml": "name = \"bigtoml\"\n",
	})
	home := t.TempDir()
	p := newPM(t, ws, map[string]string{"HOME": home, "CARGO_HOME": filepath.Join(home, ".cargo"), "CARGO": "/nonexistent/cargo"})
	var logs pmtest.LogBuffer
	p.session().Logger = slog.New(slog.NewTextHandler(&logs, nil))
	offers, err := p.ActivePlugins(context.Background(), ids("huge@0.1.0", "fine@0.1.0", "bigtoml@0.1.0"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, o := range offers {
		got[o.ID.Name] = true
		if len(o.Manifest) > 1<<20 {
			t.Errorf("%s: a %d-byte manifest was offered", o.ID.Name, len(o.Manifest))
		}
	}
	if !got["fine"] || got["huge"] {
		t.Errorf("offered %v, want fine and not huge", got)
	}
	out := logs.String()
	for _, want := range []string{"huge", "SYMPOSIUM.toml", "over the size cap", "bigtoml"} {
		if !strings.Contains(out, want) {
			t.Errorf("warnings lack %q:\n%.2000s", want, out)
		}
	}
}
