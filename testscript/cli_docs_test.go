package testscript

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

// TestPMNodeReadmeConfig: the configuration examples/pm-node/README.md
// tells users to paste is valid and declares the PM a registry, so its
// plugins are trusted rather than shown as dependencies needing consent.
func TestPMNodeReadmeConfig(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "pm-node", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllSubmatch(data, -1)
	if len(blocks) == 0 {
		t.Fatal("no toml block in examples/pm-node/README.md")
	}
	for _, b := range blocks {
		c, err := config.Parse("README.md", b[1], t.TempDir())
		if err != nil {
			t.Errorf("the README's configuration does not parse: %v\n%s", err, b[1])
			continue
		}
		for _, pm := range c.PackageManagers {
			if pm.Kind != "registry" {
				t.Errorf("[[package-manager]] %q in the README has kind %q, want \"registry\"", pm.Name, pm.Kind)
			}
		}
	}
}
