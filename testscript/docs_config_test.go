package testscript

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/host/config"
)

// configDocs are the documents whose every TOML block is a configuration
// file (or a fragment of one) that a reader is meant to paste.
var configDocs = []string{
	"docs/configuration.md",
	"docs/writing-a-pm.md",
	"examples/pm-python/README.md",
}

var tomlBlock = regexp.MustCompile("(?s)```toml\n(.*?)```")

// TestDocsConfigExamples: every configuration example of the documents
// above parses under the host's strict configuration rules, as it would in
// a user's config.toml.
func TestDocsConfigExamples(t *testing.T) {
	root := repoRoot(t)
	if root == "" {
		t.Skip("not in a checkout of the repository: the documents are absent")
	}
	for _, doc := range configDocs {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(doc)))
		if err != nil {
			t.Fatal(err)
		}
		blocks := tomlBlock.FindAllSubmatchIndex(data, -1)
		if len(blocks) == 0 {
			t.Errorf("%s: no toml block; the test's list of documents is stale", doc)
		}
		for _, b := range blocks {
			line := 1 + strings.Count(string(data[:b[2]]), "\n")
			if _, err := config.Parse(doc, data[b[2]:b[3]], t.TempDir()); err != nil {
				t.Errorf("%s:%d: the configuration example does not parse: %v", doc, line, err)
			}
		}
	}
}
