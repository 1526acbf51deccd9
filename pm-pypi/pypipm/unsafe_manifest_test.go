package pypipm

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/symposium-dev/symposium-pm/sdk/pmtest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestUnsafeManifests: in a virtualenv's site-packages, a package whose
// SYMPOSIUM.toml links to /dev/zero (which ran the PM out of memory), one
// whose SYMPOSIUM.toml is a FIFO (which blocked active_plugins forever),
// one with a 2 MiB SYMPOSIUM.toml and one whose entry_points.txt is a FIFO
// each get a warning naming the package, and the other packages' plugins
// are still offered.
func TestUnsafeManifests(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("FIFOs and /dev/zero")
	}
	ws := t.TempDir()
	site := filepath.Join(ws, ".venv", "lib", "python3.11", "site-packages")
	os.WriteFile(filepath.Join(ws, ".venv", "pyvenv.cfg"), []byte("home = /usr/bin\nversion = 3.11.7\n"), 0o644)
	dist := func(name string, entryPoints bool) {
		di := filepath.Join(site, name+"-1.0.dist-info")
		os.MkdirAll(di, 0o755)
		os.MkdirAll(filepath.Join(site, name), 0o755)
		os.WriteFile(filepath.Join(di, "METADATA"), []byte("Name: "+name+"\nVersion: 1.0\n"), 0o644)
		os.WriteFile(filepath.Join(di, "top_level.txt"), []byte(name+"\n"), 0o644)
		if entryPoints {
			os.WriteFile(filepath.Join(di, "entry_points.txt"), []byte("[symposium]\n"+name+" = "+name+"\n"), 0o644)
		}
	}
	for _, n := range []string{"zero", "fifo", "huge", "epfifo", "fine", "alsofine"} {
		dist(n, n == "alsofine")
	}
	if err := os.Symlink("/dev/zero", filepath.Join(site, "zero", ManifestFile)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(site, "fifo", ManifestFile), 0o644); err != nil {
		t.Skip(err)
	}
	os.WriteFile(filepath.Join(site, "huge", ManifestFile), []byte("name = \""+strings.Repeat("h", 2<<20)+"\"\n"), 0o644)
	os.WriteFile(filepath.Join(site, "epfifo", ManifestFile), []byte("name = \"epfifo\"\n"), 0o644)
	os.Remove(filepath.Join(site, "epfifo-1.0.dist-info", "entry_points.txt"))
	if err := syscall.Mkfifo(filepath.Join(site, "epfifo-1.0.dist-info", "entry_points.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(site, "fine", ManifestFile), []byte("name = \"fine\"\n"), 0o644)
	os.WriteFile(filepath.Join(site, "alsofine", ManifestFile), []byte("name = \"alsofine\"\n"), 0o644)

	p := newPM(t, ws, t.TempDir(), nil)
	var logs pmtest.LogBuffer
	p.log = slog.New(slog.NewTextHandler(&logs, nil))
	var deps []protocol.PackageID
	for _, n := range []string{"zero", "fifo", "huge", "epfifo", "fine", "alsofine"} {
		deps = append(deps, id(n, "1.0"))
	}
	type answer struct {
		offers []protocol.Offer
		err    error
	}
	done := make(chan answer, 1)
	go func() {
		o, err := p.ActivePlugins(context.Background(), deps)
		done <- answer{o, err}
	}()
	var a answer
	select {
	case a = <-done:
	case <-time.After(2 * time.Minute): // generous: a hang is the bug
		t.Fatal("active_plugins did not answer: a FIFO blocked it")
	}
	if a.err != nil {
		t.Fatal(a.err)
	}
	got := map[string]bool{}
	for _, o := range a.offers {
		got[o.ID.Name] = true
	}
	if !got["fine"] || !got["alsofine"] || len(got) != 3 || !got["epfifo"] {
		t.Errorf("offered %v, want fine, alsofine and epfifo (without its entry points)", got)
	}
	out := logs.String()
	for _, want := range []string{"pypi:zero@1.0", "a link leading out of the package", "pypi:fifo@1.0", "a FIFO",
		"pypi:huge@1.0", "over the size cap", "pypi:epfifo@1.0"} {
		if !strings.Contains(out, want) {
			t.Errorf("warnings lack %q:\n%s", want, out)
		}
	}
}
