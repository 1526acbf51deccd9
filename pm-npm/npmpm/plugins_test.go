package npmpm

import (
	"context"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// TestBrokenTOMLLayer checks that a package whose SYMPOSIUM.toml is not TOML
// is still offered, its TOML layer dropped and its package.json layer kept.
func TestBrokenTOMLLayer(t *testing.T) {
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{
		"package.json":                        `{"name":"app","dependencies":{"broken":"^1"}}`,
		"node_modules/broken/package.json":    `{"name":"broken","version":"1.0.0","symposium":{"skills":[{"source":{"path":"docs"}}]}}`,
		"node_modules/broken/SYMPOSIUM.toml":  "name = \"renamed\"\n[defaults\nskills = false\n",
		"node_modules/fine/package.json":      `{"name":"fine","version":"2.0.0"}`,
		"node_modules/fine/SYMPOSIUM.toml":    "[defaults]\nskills = false\n[[skills]]\nsource.path = \"guide\"\n",
		"node_modules/fine/guide/a/SKILL.md":  "---\nname: a\ndescription: b\n---\n",
		"node_modules/broken/docs/a/SKILL.md": "---\nname: a\ndescription: b\n---\n",
	})
	p, _ := newPM(t, ws, nil)
	offers, err := p.ActivePlugins(context.Background(), []protocol.PackageID{npmID("broken", "1.0.0"), npmID("fine", "2.0.0")})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, o := range offers {
		got[o.ID.Name] = string(o.Manifest)
	}
	want := map[string]string{
		"broken": `{"name":"broken","skills":[{"source":{"path":"docs"}},{"source":{"path":"skills"}}]}`,
		"fine":   `{"defaults":{"skills":false},"name":"fine","skills":[{"source":{"path":"guide"}}]}`,
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s manifest %s, want %s", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("offers %v, want %v", got, want)
	}
}
