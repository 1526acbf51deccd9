package npmpm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestOversizeManifestSkipsOnePackage: a dependency whose package.json is
// over the 1 MiB manifest cap (a 2 MiB "name", standing for the 100 MiB
// one of the attack), one whose SYMPOSIUM.toml links to /dev/zero and one
// whose SYMPOSIUM.toml is a FIFO are each reported by a warning naming the
// package, and the other dependencies' plugins are still offered.
func TestOversizeManifestSkipsOnePackage(t *testing.T) {
	ws := t.TempDir()
	huge := `{"name":"` + strings.Repeat("n", 2<<20) + `","version":"1.0.0","symposium":{"name":"huge"}}`
	writeFiles(t, ws, map[string]string{
		"package.json":                         `{"name":"app"}`,
		"node_modules/huge/package.json":       huge,
		"node_modules/zero/package.json":       `{"name":"zero","version":"1.0.0","symposium":{"name":"zero"}}`,
		"node_modules/fifo/package.json":       `{"name":"fifo","version":"1.0.0","symposium":{"name":"fifo"}}`,
		"node_modules/fine/package.json":       `{"name":"fine","version":"2.0.0"}`,
		"node_modules/fine/SYMPOSIUM.toml":     "name = \"fine\"\n",
		"node_modules/other/package.json":      `{"name":"other","version":"3.0.0","symposium":{"name":"other"}}`,
		"node_modules/other/skills/a/SKILL.md": "---\nname: a\ndescription: b\n---\n",
	})
	if err := os.Symlink("/dev/zero", filepath.Join(ws, "node_modules/zero/SYMPOSIUM.toml")); err != nil {
		t.Fatal(err)
	}
	fifo := runtime.GOOS != "windows" && syscall.Mkfifo(filepath.Join(ws, "node_modules/fifo/SYMPOSIUM.toml"), 0o644) == nil
	p, _ := newPM(t, ws, nil)
	var logs pmtest.LogBuffer
	p.log = slog.New(slog.NewTextHandler(&logs, nil))
	deps := []protocol.PackageID{npmID("huge", "1.0.0"), npmID("zero", "1.0.0"), npmID("fifo", "1.0.0"), npmID("fine", "2.0.0"), npmID("other", "3.0.0")}
	offers, err := p.ActivePlugins(context.Background(), deps)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range offers {
		got[o.ID.Name] = string(o.Manifest)
		if len(o.Manifest) > 1<<20 {
			t.Errorf("%s: a %d-byte manifest was offered", o.ID.Name, len(o.Manifest))
		}
	}
	if _, ok := got["huge"]; ok {
		t.Error("the package with the oversize package.json was offered")
	}
	for _, name := range []string{"fine", "other", "zero"} {
		if _, ok := got[name]; !ok {
			t.Errorf("%s not offered; offers: %v", name, got)
		}
	}
	if fifo {
		if _, ok := got["fifo"]; !ok {
			t.Errorf("fifo (its package.json layer) not offered; offers: %v", got)
		}
	}
	out := logs.String()
	for _, want := range []string{"package=huge", "over the size cap", "package=zero", "a link leading out of the package"} {
		if !strings.Contains(out, want) {
			t.Errorf("warnings lack %q:\n%s", want, out)
		}
	}
	if fifo && !strings.Contains(out, "package=fifo") {
		t.Errorf("no warning names the FIFO's package:\n%s", out)
	}
}
