//go:build unix

package discovery

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host"
	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

// TestPathRegistryReadBounded: a directory registry's entries are read as
// validate reads them (sdk/pkgfile, through the registry opened as a
// root): a SYMPOSIUM.toml or SKILL.md over the 1 MiB cap is a warning
// naming the entry, the file and the cap (os.ReadFile read it whole), and
// an entry reached through a link leading out of the registry is a
// warning; the other entries are offered, a link inside the registry
// followed. (A FIFO is no entry at all: layout.Classify wants a regular
// file, and pkgfile opens without blocking should one appear since.)
func TestPathRegistryReadBounded(t *testing.T) {
	const toml = "name = \"%s\"\ndepends-on = \"*\"\n"
	pad := strings.Repeat("#"+strings.Repeat(" ", 78)+"\n", MaxManifestSize/80+1)
	bigTOML := fmt.Sprintf(toml, "big") + pad
	bigSkill := "---\nname: bigskill\ndescription: d\n---\n" + pad
	outside := tree(t, map[string]string{"SYMPOSIUM.toml": fmt.Sprintf(toml, "outside")})
	reg := tree(t, map[string]string{
		"ok/SYMPOSIUM.toml":     fmt.Sprintf(toml, "ok"),
		"linked/SYMPOSIUM.toml": "->../common/linked.toml",
		"common/linked.toml":    fmt.Sprintf(toml, "linked"),
		"big/SYMPOSIUM.toml":    bigTOML,
		"skill/SKILL.md":        "---\nname: skill\ndescription: d\n---\n",
		"bigskill/SKILL.md":     bigSkill,
		"out":                   "->" + outside,
	})
	ws := t.TempDir()
	pms := host.NewRegistry(host.Options{Workspace: ws})
	defer pms.Close()
	res := Discover(t.Context(), Options{Workspace: ws, Config: &config.Config{}, PMs: pms,
		PathRegistries: []PathRegistry{{Name: "reg", Dir: reg}}})
	for _, name := range []string{"ok", "linked", "skill"} {
		if plugin(res, "reg", name) == nil {
			t.Errorf("entry %s is not offered: plugins %+v, warnings %q", name, res.Plugins, res.Warnings)
		}
	}
	for _, name := range []string{"big", "bigskill", "outside"} {
		if p := plugin(res, "reg", name); p != nil {
			t.Errorf("entry %s is offered: %+v", name, p)
		}
	}
	for _, w := range []struct{ entry, file string }{
		{"big", "SYMPOSIUM.toml"},
		{"bigskill", "SKILL.md"},
	} {
		data := map[string]string{"big": bigTOML, "bigskill": bigSkill}[w.entry]
		want := fmt.Sprintf("registry reg: entry %s: %s: %d bytes, over the size cap of %d bytes",
			w.entry, filepath.Join(reg, w.entry, w.file), len(data), MaxManifestSize)
		if !warned(res, want) {
			t.Errorf("no warning %q in %q", want, res.Warnings)
		}
	}
	// A link out that is a directory on the way is refused as a link
	// leading out, as a link out that is the file itself is.
	if want := "registry reg: entry out: " + filepath.Join(reg, "out", "SYMPOSIUM.toml") + ": a link leading out of the package"; !warned(res, want) {
		t.Errorf("no warning %q in %q", want, res.Warnings)
	}
}
