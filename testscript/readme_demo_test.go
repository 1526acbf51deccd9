package testscript

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// demoPlugin is one plugin the README's demo table names, with the state
// it says the plugin gets.
type demoPlugin struct {
	line            int
	state, pm, name string
}

// demoPluginSpan is a plugin named in the table's "in the demo" column.
var demoPluginSpan = regexp.MustCompile("`([a-z]+):([^`]+)`")

// readmeDemoTable returns the plugins of the table of README.md whose
// header is "| state | meaning | in the demo |".
func readmeDemoTable(t *testing.T, path string) []demoPlugin {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []demoPlugin
	in := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "| state | meaning | in the demo |"):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			if len(cells) != 3 {
				t.Fatalf("%s:%d: the demo table's row has %d cells, want 3", path, n, len(cells))
			}
			state := strings.Trim(strings.TrimSpace(cells[0]), "`")
			for _, m := range demoPluginSpan.FindAllStringSubmatch(cells[2], -1) {
				out = append(out, demoPlugin{line: n, state: state, pm: m[1], name: m[2]})
			}
		case in:
			in = false
		}
	}
	return out
}

// TestReadmeDemo runs the demo as make demo does (scripts/demo.sh, on this
// test's binaries) and checks that each plugin the README's table of states
// names "in the demo" gets the state the table gives it, with no warning.
func TestReadmeDemo(t *testing.T) {
	root := repoRoot(t)
	if root == "" {
		t.Skip("not in a checkout of the repository: the README and the demo are absent")
	}
	readme := filepath.Join(root, "README.md")
	plugins := readmeDemoTable(t, readme)
	if len(plugins) < 5 {
		t.Fatalf("%s: found %d plugins in the demo table (| state | meaning | in the demo |); want one per state at least", readme, len(plugins))
	}
	var script strings.Builder
	script.WriteString("[!exec:git] skip 'git not installed: the demo serves its registry from git'\n")
	script.WriteString("[!exec:bash] skip 'bash not installed: the demo script needs it'\n")
	script.WriteString("env SYMPOSIUM_DEMO_BIN=$WORK/no-bin\n")
	script.WriteString("exec bash $ROOT/scripts/demo.sh\n")
	// Every PM of the demo answers: no warning.
	script.WriteString("! stdout '^Warnings'\n")
	for _, p := range plugins {
		fmt.Fprintf(&script, "# README.md:%d\nstdout '^%s +%s +\\S+ +\\S+ +%s +'\n",
			p.line, regexp.QuoteMeta(p.pm), regexp.QuoteMeta(p.name), regexp.QuoteMeta(p.state))
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "demo.txtar"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("ROOT", root)
			return nil
		},
	})
}
