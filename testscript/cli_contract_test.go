package testscript

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
	"github.com/rogpeppe/go-internal/txtar"

	"github.com/symposium-dev/symposium-pm/sdk/host/cli"
)

// contractEnv is the scratch directory every row of the exit-code table of
// docs/cli.md runs in: a fixture PM eco and a path registry reg, and the
// variants SYMPOSIUM_HOME selects. The built-in PMs are replaced by empty
// fixtures, so that no row depends on the network.
const contractEnv = `
-- home/config.toml --
[defaults]
symposium-recommendations = false
user-plugins = false

[[package-manager]]
name = "eco"
command = "symposium-pm-fixture"
args = ["--name", "eco", "--data", "../deps"]  # from the workspace

[[registry]]
name = "reg"
path = "../reg"  # from the config directory

# The built-in PMs would search the network: empty stand-ins keep it offline.
[[package-manager]]
name = "cargo"
command = "symposium-pm-fixture"
args = ["--name", "cargo"]

[[package-manager]]
name = "npm"
command = "symposium-pm-fixture"
args = ["--name", "npm"]

[[package-manager]]
name = "pypi"
command = "symposium-pm-fixture"
args = ["--name", "pypi"]

[plugins]
use = ["used"]
-- bad/config.toml --
[defaults]
symposium-recommendations = false

[registy]
name = "reg"
-- dead/config.toml --
[defaults]
symposium-recommendations = false
user-plugins = false

[[package-manager]]
name = "eco"
command = "symposium-pm-fixture"
args = ["--name", "eco", "--mode", "exit"]

[[package-manager]]
name = "cargo"
command = "symposium-pm-fixture"
args = ["--name", "cargo", "--mode", "exit"]

[[package-manager]]
name = "npm"
command = "symposium-pm-fixture"
args = ["--name", "npm", "--mode", "exit"]

[[package-manager]]
name = "pypi"
command = "symposium-pm-fixture"
args = ["--name", "pypi", "--mode", "exit"]
-- noreg/config.toml --
[defaults]
symposium-recommendations = false
user-plugins = false

[[registry]]
name = "gone"
path = "../no-such-dir"
-- src/config.toml --
[defaults]
symposium-recommendations = false
user-plugins = false

[[package-manager]]
name = "fix"
source = "go"
module = "example.com/fixture/cmd/symposium-pm-fixture"
version = "v0.1.0"
-- deps/fixture.toml --
version = "1.0.0"
active = ["used", "broken"]

[[deps]]
name = "left-pad"
version = "1.3.0"

[[errors]]
name = "absent"
code = -32010
message = "no such package"
-- deps/plugins/used/SYMPOSIUM.toml --
name = "used"
-- deps/plugins/used/skills/s/SKILL.md --
---
name: s
description: a skill
---
-- deps/plugins/broken/manifest.json --
{"name": 5}
-- reg/tips/SKILL.md --
---
name: tips
description: tips
depends-on: left-pad
---
-- plugin/SYMPOSIUM.toml --
name = "good"
depends-on = "serde"
-- plugin/skills/s/SKILL.md --
---
name: s
description: a skill
---
-- badplugin/SYMPOSIUM.toml --
name = "bad"
crates = ["serde"]
-- ws/README --
the workspace
`

// contractRow is one row of the exit-code table.
type contractRow struct {
	command, when, example string
	exit                   int
}

// contractRows reads the exit-code table of docs/cli.md: the table after
// the "<!-- exit-codes" marker.
func contractRows(t *testing.T) []contractRow {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []contractRow
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "<!-- exit-codes"):
			in = true
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			if len(cells) != 4 || cells[0] == "command" || strings.HasPrefix(cells[0], "---") {
				continue
			}
			var r contractRow
			if _, err := fmt.Sscan(cells[1], &r.exit); err != nil {
				t.Fatalf("docs/cli.md: row %q: exit %q is not a number", line, cells[1])
			}
			r.command, r.when = cells[0], cells[2]
			r.example = strings.TrimSuffix(strings.TrimPrefix(cells[3], "`"), "`")
			rows = append(rows, r)
		case in && len(rows) > 0:
			in = false
		}
	}
	if len(rows) == 0 {
		t.Fatal("docs/cli.md: no exit-code table")
	}
	return rows
}

// TestCLIContract runs every row of the exit-code table of docs/cli.md and
// checks its exit code; a usage error (2) must say what was wrong before
// the usage, a help row that succeeds must print the usage on stdout and
// nothing on stderr, and a --json example must print a version 1 document
// even when it fails.
func TestCLIContract(t *testing.T) {
	rows := contractRows(t)
	commands := map[string]bool{}
	env := txtar.Parse([]byte(contractEnv))
	var script strings.Builder
	script.WriteString("env SYMPOSIUM_HOME=$WORK/home\n")
	script.WriteString("cd ws\n")
	for i, r := range rows {
		commands[r.command] = true
		sh := fmt.Sprintf("row%d.sh", i)
		env.Files = append(env.Files, txtar.File{Name: sh, Data: []byte(r.example + " >$WORK/out 2>$WORK/err\necho exit=$?\n")})
		fmt.Fprintf(&script, "\n# %s %d: %s\nexec sh $WORK/%s\nstdout '^exit=%d$'\n", r.command, r.exit, r.when, sh, r.exit)
		if r.exit == 2 {
			// The first line of stderr says what was wrong; the usage follows.
			fmt.Fprintf(&script, "exec head -n 1 $WORK/err\n! stdout '^Usage'\nstdout .\n")
		}
		if r.command == "help" && r.exit == 0 {
			// Help asked for is the usage on stdout, nothing on stderr.
			fmt.Fprintf(&script, "exec head -n 1 $WORK/out\nstdout '^Usage: '\nexec cat $WORK/err\n! stdout .\n")
		}
		if strings.Contains(r.example, "--json") {
			fmt.Fprintf(&script, "exec cat $WORK/out\nstdout '^\\{'\nstdout '\"version\": 1'\n")
		}
	}
	for _, c := range append(listedCommands(t), "version", "help") {
		if !commands[c] {
			t.Errorf("docs/cli.md: the exit-code table has no row for %s", c)
		}
	}
	env.Comment = []byte(script.String())
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "contract.txtar"), txtar.Format(env), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{Dir: dir, RequireExplicitExec: true})
}

// listedCommands returns the commands symposium-pm --help lists, so that a
// new command without a row in the exit-code table fails TestCLIContract.
func listedCommands(t *testing.T) []string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := cli.Main([]string{"--help"}, &stdout, &stderr); code != cli.ExitOK {
		t.Fatalf("symposium-pm --help: exit %d", code)
	}
	var names []string
	in := false
	for _, line := range strings.Split(stdout.String(), "\n") {
		switch {
		case line == "Commands:":
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			names = append(names, strings.Fields(line)[0])
		}
	}
	if len(names) < 10 {
		t.Fatalf("symposium-pm --help lists %d commands (%q): is its layout what this test expects?", len(names), names)
	}
	return names
}
