package gitregistry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzRawManifest checks that any SYMPOSIUM.toml either is refused with an
// error or becomes a JSON object, without panicking.
func FuzzRawManifest(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/recommendations/*/SYMPOSIUM.toml")
	more, _ := filepath.Glob("testdata/recommendations/*/*/*/SYMPOSIUM.toml")
	for _, p := range append(seeds, more...) {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("name = 1979-05-27T07:32:00Z\n[[skills]]\nsource.path = 'x'\nwhen = 07:32:00\n"))
	f.Add([]byte("name = \"x\"\npredicates = \"one\"\n[subcommand.a]\ndescription = 3\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, raw, _, err := rawManifest(data)
		if err != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("manifest %q became invalid JSON %s: %v", data, raw, err)
		}
	})
}
