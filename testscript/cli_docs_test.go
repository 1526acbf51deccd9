package testscript

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

// TestExampleReadmeConfig: the configuration the READMEs of the example
// PMs (examples/pm-node, examples/pm-python) tell users to paste is valid
// and declares the PM a registry, so its plugins are trusted rather than
// shown as dependencies needing consent.
func TestExampleReadmeConfig(t *testing.T) {
	for _, example := range []string{"pm-node", "pm-python"} {
		readme := filepath.Join("examples", example, "README.md")
		data, err := os.ReadFile(filepath.Join("..", readme))
		if err != nil {
			t.Fatal(err)
		}
		blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllSubmatch(data, -1)
		if len(blocks) == 0 {
			t.Errorf("no toml block in %s", readme)
		}
		for _, b := range blocks {
			c, err := config.Parse("README.md", b[1], t.TempDir())
			if err != nil {
				t.Errorf("the configuration of %s does not parse: %v\n%s", readme, err, b[1])
				continue
			}
			for _, pm := range c.PackageManagers {
				if pm.Kind != "registry" {
					t.Errorf("[[package-manager]] %q in %s has kind %q, want \"registry\"", pm.Name, readme, pm.Kind)
				}
			}
		}
	}
}
