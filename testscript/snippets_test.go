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

// markedBlock is a fenced code block of a guide whose previous line is a
// marker comment.
type markedBlock struct {
	line int      // of the marker
	args []string // the marker's submatches
	body string
}

// markedBlocks returns the fenced code blocks of the Markdown file at path
// that follow a line matching marker.
func markedBlocks(t *testing.T, path string, marker *regexp.Regexp) []markedBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []markedBlock
	sc := bufio.NewScanner(bytes.NewReader(data))
	n := 0
	var cur *markedBlock
	inBlock := false
	var body strings.Builder
	for sc.Scan() {
		n++
		line := sc.Text()
		switch {
		case cur != nil && !inBlock:
			if !strings.HasPrefix(line, "```") {
				t.Errorf("%s:%d: a marker must be followed by a fenced code block", path, cur.line)
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
			if m := marker.FindStringSubmatch(line); m != nil {
				cur = &markedBlock{line: n, args: m[1:]}
			}
		}
	}
	if cur != nil {
		t.Errorf("%s:%d: marker without a complete code block", path, cur.line)
	}
	return out
}

// guideSnippets returns the snippet-marked code blocks of the Markdown file
// at path.
func guideSnippets(t *testing.T, path string) []snippet {
	t.Helper()
	var out []snippet
	for _, b := range markedBlocks(t, path, snippetMarker) {
		out = append(out, snippet{line: b.line, scenario: b.args[0], file: b.args[1], body: b.body})
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

// commandsMarker precedes a shell block of a guide whose every command a
// testscript scenario runs as written:
// <!-- commands: SCENARIO.txtar [SCENARIO.txtar...] -->.
var commandsMarker = regexp.MustCompile(`^<!-- commands: (\S+\.txtar(?: \S+\.txtar)*) -->$`)

// shellComment is a comment at the end of a command line.
var shellComment = regexp.MustCompile(`(^|\s)#.*$`)

// TestPluginAuthorsCommands keeps the commands docs/plugin-authors.md tells
// authors to run identical to exec lines of the scenarios named by the
// block's marker, so that each is run, as written, on the guide's files.
func TestPluginAuthorsCommands(t *testing.T) {
	guide := filepath.Join("..", "docs", "plugin-authors.md")
	blocks := markedBlocks(t, guide, commandsMarker)
	if len(blocks) == 0 {
		t.Fatalf("%s: no commands marker", guide)
	}
	for _, b := range blocks {
		run := map[string]bool{}
		for _, name := range strings.Fields(b.args[0]) {
			ar, err := txtar.ParseFile(filepath.Join("testdata", name))
			if err != nil {
				t.Errorf("%s:%d: %v", guide, b.line, err)
				continue
			}
			for _, line := range strings.Split(string(ar.Comment), "\n") {
				line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "!"))
				if cmd, ok := strings.CutPrefix(line, "exec "); ok {
					run[strings.Join(strings.Fields(cmd), " ")] = true
				}
			}
		}
		for i, line := range strings.Split(strings.TrimSuffix(b.body, "\n"), "\n") {
			cmd := strings.Join(strings.Fields(shellComment.ReplaceAllString(line, "")), " ")
			if cmd != "" && !run[cmd] {
				t.Errorf("%s:%d: %q is run by no exec line of %s", guide, b.line+2+i, cmd, b.args[0])
			}
		}
	}
}
