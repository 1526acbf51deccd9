package testscript

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// snippetMarker precedes a fenced code block of a guide that must be
// identical to a file of a testscript scenario:
// <!-- snippet: SCENARIO.txtar FILE -->.
var snippetMarker = regexp.MustCompile(`^<!-- snippet: (\S+\.txtar) (\S+) -->$`)

// snippet is one marked code block of a guide.
type snippet struct {
	line     int // of the marker
	scenario string
	file     string
	body     string
}

// guideSnippets returns the marked code blocks of the Markdown file at path.
func guideSnippets(t *testing.T, path string) []snippet {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []snippet
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	var cur *snippet
	inBlock := false
	var body strings.Builder
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case cur != nil && !inBlock:
			if !strings.HasPrefix(line, "```") {
				t.Errorf("%s:%d: a snippet marker must be followed by a fenced code block", path, cur.line)
				cur = nil
				continue
			}
			inBlock = true
			body.Reset()
		case inBlock:
			if strings.HasPrefix(line, "```") {
				cur.body = body.String()
				out = append(out, *cur)
				cur, inBlock = nil, false
				continue
			}
			body.WriteString(line)
			body.WriteByte('\n')
		default:
			if m := snippetMarker.FindStringSubmatch(line); m != nil {
				cur = &snippet{line: n, scenario: m[1], file: m[2]}
			}
		}
	}
	if cur != nil {
		t.Errorf("%s:%d: snippet without a complete code block", path, cur.line)
	}
	return out
}

// TestPluginAuthorsSnippets keeps the worked examples of
// docs/plugin-authors.md identical to the files the plugin-authors-*
// scenarios run, so the guide shows exactly what is tested.
func TestPluginAuthorsSnippets(t *testing.T) {
	guide := filepath.Join("..", "docs", "plugin-authors.md")
	snippets := guideSnippets(t, guide)
	if len(snippets) < 8 {
		t.Fatalf("%s: found %d snippet markers; want every worked example marked", guide, len(snippets))
	}
	archives := map[string]*txtar.Archive{}
	used := map[string]bool{}
	for _, s := range snippets {
		ar, ok := archives[s.scenario]
		if !ok {
			var err error
			ar, err = txtar.ParseFile(filepath.Join("testdata", s.scenario))
			if err != nil {
				t.Errorf("%s:%d: %v", guide, s.line, err)
				continue
			}
			archives[s.scenario] = ar
		}
		used[s.scenario] = true
		var found bool
		for _, f := range ar.Files {
			if f.Name != s.file {
				continue
			}
			found = true
			if got := string(f.Data); got != s.body {
				t.Errorf("%s:%d: the snippet differs from %s in testdata/%s:\n--- guide\n%s--- scenario\n%s",
					guide, s.line, s.file, s.scenario, s.body, got)
			}
		}
		if !found {
			t.Errorf("%s:%d: testdata/%s has no file %s", guide, s.line, s.scenario, s.file)
		}
	}
	scenarios, err := filepath.Glob(filepath.Join("testdata", "plugin-authors-*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range scenarios {
		if !used[filepath.Base(sc)] {
			t.Errorf("%s is not shown in %s", sc, guide)
		}
	}
}
