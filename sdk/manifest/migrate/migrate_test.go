package migrate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/layout"
	"github.com/symposium-dev/symposium-pm/sdk/manifest/skill"
)

// tomlCases pairs a manifest written with retired keys with the exact text
// migrate must produce: every byte it does not change (comments, spacing,
// order) must come through as it was.
var tomlCases = []struct {
	name, in, want string
	changes        int
	valid          bool // the output validates as a registry manifest
}{
	{
		name: "top-level crates, odd spacing and comments",
		in: `# a plugin from the old days
name   =   "p"   # its name
crates=[ "serde" ,"tokio>=1" ]  # gate

[[skills]]
source.path = "skills"
`,
		want: `# a plugin from the old days
name   =   "p"   # its name
depends-on=[ "serde" ,"tokio>=1" ]  # gate

[[skills]]
source.path = "skills"
`,
		changes: 1, valid: true,
	},
	{
		name:    "quoted crates key, string value",
		in:      "name = \"p\"\n\"crates\"   =   'serde'\n",
		want:    "name = \"p\"\ndepends-on   =   'serde'\n",
		changes: 1, valid: true,
	},
	{
		name: "skills group crates",
		in: `name = "p"
depends-on = "serde"

[[skills]]
	crates = ["serde_json"]   # json support
	source.path = "json"
`,
		want: `name = "p"
depends-on = "serde"

[[skills]]
	depends-on = ["serde_json"]   # json support
	source.path = "json"
`,
		changes: 1, valid: true,
	},
	{
		name: "source = crate with the plugin's one crate",
		in: `name = "my-crate"
crates = ["my-crate"]

# skills shipped inside the crate
[[skills]]
source   =   "crate"     # from crates.io
`,
		want: `name = "my-crate"
depends-on = ["my-crate"]

# skills shipped inside the crate
[[plugins]]
source.cargo = "my-crate"     # from crates.io
`,
		changes: 3, valid: true,
	},
	{
		name: "source.crate_path skills with the group's crate",
		in: `name = "legacy"
crates = ["serde"]

[[skills]]
crates = ["serde>=1.0"]
source.crate_path = "skills"

[[hooks]]
name = "h"
event = "Stop"
command = { executable = "true" }
`,
		want: `name = "legacy"
depends-on = ["serde"]

[[plugins]]
depends-on = ["serde>=1.0"]
source.cargo = "serde"

[[hooks]]
name = "h"
event = "Stop"
command = { executable = "true" }
`,
		changes: 4, valid: true,
	},
	{
		name:    "crate_path ./skills/ inline source table",
		in:      "name = \"p\"\ndepends-on = \"gizmo\"\n[[skills]]\nsource = { crate_path = \"./skills/\" }\n",
		want:    "name = \"p\"\ndepends-on = \"gizmo\"\n[[plugins]]\nsource.cargo = \"gizmo\"\n",
		changes: 2, valid: true,
	},
	{
		name: "source = crate with several crates",
		in: `name = "dial9"
crates = ["dial9-tokio-telemetry", "dial9"]

[[skills]]
# the viewer's skills
crates = ["dial9-viewer"]
predicates = ["not(env(CI))"]
source.crate_path = "skills"

[[skills]]
source.path = "local"
`,
		want: `name = "dial9"
depends-on = ["dial9-tokio-telemetry", "dial9"]

# the viewer's skills
[[plugins]]
depends-on = "dial9-viewer"
predicates = ["not(env(CI))"]
source.cargo = "dial9-viewer"

[[plugins]]
depends-on = "dial9-tokio-telemetry"
predicates = ["depends-on(dial9-viewer)", "not(env(CI))"]
source.cargo = "dial9-tokio-telemetry"

[[plugins]]
depends-on = "dial9"
predicates = ["depends-on(dial9-viewer)", "not(env(CI))"]
source.cargo = "dial9"

[[skills]]
source.path = "local"
`,
		changes: 2, valid: true,
	},
	{
		name: "source = crate, plugin crates only, wildcard skipped",
		in:   "name = \"p\"\ncrates = [\"a\", \"*\", \"b^1\"]\n\n[[skills]]\nsource = \"crate\"\n",
		want: "name = \"p\"\ndepends-on = [\"a\", \"*\", \"b^1\"]\n\n" +
			"[[plugins]]\ndepends-on = \"a\"\nsource.cargo = \"a\"\n\n[[plugins]]\ndepends-on = \"b^1\"\nsource.cargo = \"b\"\n",
		changes: 2, valid: true,
	},
	{
		name: "source = crate gated by the group's depends-on, predicates kept",
		in: `name = "p"
depends-on = ["serde", "*"]

[[skills]]
depends-on = "serde"       # only serde's
predicates = ["not(crate(tokio))"]
source = "crate"
`,
		want: `name = "p"
depends-on = ["serde", "*"]

[[plugins]]
depends-on = "serde"       # only serde's
predicates = ["not(depends-on(tokio))"]
source.cargo = "serde"
`,
		changes: 3, valid: true,
	},
	{
		name:    "CRLF line endings",
		in:      "name = \"p\"\r\ncrates = [\"a\", \"b\"]\r\n\r\n[[skills]]\r\nsource = \"crate\"\r\n",
		want:    "name = \"p\"\r\ndepends-on = [\"a\", \"b\"]\r\n\r\n[[plugins]]\r\ndepends-on = \"a\"\r\nsource.cargo = \"a\"\r\n\r\n[[plugins]]\r\ndepends-on = \"b\"\r\nsource.cargo = \"b\"\r\n",
		changes: 2, valid: true,
	},
	{
		name: "mcp server and subcommand crates",
		in: `name = "p"
depends-on = "x"

[[mcp_servers]]
name = "m"
command = "/bin/m"
args = []
env = []
crates = "x"

[subcommand.go]
description = "d"
command = { executable = "true" }
crates = ["x"] # only with x
`,
		want: `name = "p"
depends-on = "x"

[[mcp_servers]]
name = "m"
command = "/bin/m"
args = []
env = []
depends-on = "x"

[subcommand.go]
description = "d"
command = { executable = "true" }
depends-on = ["x"] # only with x
`,
		changes: 2, valid: true,
	},
	{
		name:    "chained source.crate",
		in:      "name = \"p\"\ndepends-on = \"x\"\n\n[[plugins]]\nsource.crate = \"x-extras\" # extras\n",
		want:    "name = \"p\"\ndepends-on = \"x\"\n\n[[plugins]]\nsource.cargo = \"x-extras\" # extras\n",
		changes: 1, valid: true,
	},
	{
		name:    "crate() in predicates, other names untouched",
		in:      "name = \"p\"\npredicates = [\"any(crate(serde), env(MYcrate))\", 'not( crate (x))', \"shell(mycrate(1))\"]\ndepends-on = \"serde\"\n",
		want:    "name = \"p\"\npredicates = [\"any(depends-on(serde), env(MYcrate))\", 'not( depends-on (x))', \"shell(mycrate(1))\"]\ndepends-on = \"serde\"\n",
		changes: 1, valid: true,
	},
	{
		name:    "path directly in a skills group",
		in:      "name = \"p\"\ndepends-on = \"x\"\n[[skills]]\npath = \"s\"  # here\n",
		want:    "name = \"p\"\ndepends-on = \"x\"\n[[skills]]\nsource.path = \"s\"  # here\n",
		changes: 1, valid: true,
	},
	{
		name:    "where table first",
		in:      "name = \"w\"\n# top\n\n[where]\ncrates = [\"a\"] # gate\n\n[[skills]]\nsource.path = \"x\"\n",
		want:    "name = \"w\"\n# top\n\ndepends-on = [\"a\"] # gate\n\n[[skills]]\nsource.path = \"x\"\n",
		changes: 1, valid: true,
	},
	{
		name:    "where table after another",
		in:      "name = \"w\"\n# top\n\n[[skills]]\nsource.path = \"x\"\n\n[where]\ncrates = [\"a\"] # gate\n",
		want:    "name = \"w\"\ndepends-on = [\"a\"] # gate\n# top\n\n[[skills]]\nsource.path = \"x\"\n\n",
		changes: 2, valid: true,
	},
	{
		name:    "where.crates dotted",
		in:      "where.crates = [\"rtk\"]\nname = \"r\"\n",
		want:    "depends-on = [\"rtk\"]\nname = \"r\"\n",
		changes: 1, valid: true,
	},
}

func TestTOML(t *testing.T) {
	for _, c := range tomlCases {
		t.Run(c.name, func(t *testing.T) {
			out, changes, err := TOML([]byte(c.in))
			if err != nil {
				t.Fatalf("TOML: %v", err)
			}
			if string(out) != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", out, c.want)
			}
			if len(changes) != c.changes {
				t.Errorf("got %d changes, want %d: %+v", len(changes), c.changes, changes)
			}
			if c.valid {
				checkValid(t, manifest.ManifestFile, out)
			}
			// Migrating again changes nothing.
			again, ch, err := TOML(out)
			if err != nil || string(again) != string(out) || len(ch) != 0 {
				t.Errorf("second run: err %v, %d changes, output changed: %v", err, len(ch), string(again) != string(out))
			}
		})
	}
}

// checkValid validates data as a registry entry, as symposium-pm validate
// does.
func checkValid(t *testing.T, file string, data []byte) {
	t.Helper()
	dir := t.TempDir()
	entry := filepath.Join(dir, "entry")
	if err := os.MkdirAll(entry, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(entry, file), data, 0o644); err != nil {
		t.Fatal(err)
	}
	reports, err := layout.CheckPath(dir, layout.CheckOptions{Origin: manifest.OriginRegistry})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reports {
		for _, p := range r.Problems {
			if !p.Warning {
				t.Errorf("migrated file does not validate: %v", p.Error())
			}
		}
	}
}

func TestTOMLUnchanged(t *testing.T) {
	in := []byte("# nothing retired\nname = \"p\"\ndepends-on = \"serde\"\n\n[[skills]]\nsource.path = \"s\" # crates\n")
	out, changes, err := TOML(in)
	if err != nil || len(changes) != 0 || string(out) != string(in) {
		t.Fatalf("got %q, %v, %v", out, changes, err)
	}
}

func TestTOMLRefused(t *testing.T) {
	cases := []struct {
		name, in string
		line     int
		reason   string
	}{
		{"custom crate_path", "name = \"p\"\ncrates = [\"a\"]\n\n[[skills]]\nsource.crate_path = \"docs/skills\"\n", 4, `source.crate_path = "docs/skills" has no mechanical translation`},
		{"no crate named", "name = \"p\"\ndepends-on = \"*\"\n[[skills]]\nsource = \"crate\"\n", 3, "neither the group nor the plugin names a crate"},
		{"crates and depends-on", "name = \"p\"\ncrates = [\"a\"]\ndepends-on = \"b\"\n", 2, "sets both crates and depends-on"},
		{"group crates and depends-on", "name = \"p\"\n[[skills]]\ndepends-on = \"b\"\ncrates = [\"a\"]\nsource.path = \"s\"\n", 4, "skills[0] sets both crates and depends-on"},
		{"where with another condition", "name = \"p\"\n[where]\ncrates = [\"a\"]\nenv = \"X\"\n", 2, `holds "env"`},
		{"inline skills array", "name = \"p\"\ndepends-on = \"a\"\nskills = [{ source = \"crate\" }]\n", 3, "written inline"},
		{"sub-table source", "name = \"p\"\ndepends-on = \"a\"\n[[skills]]\n[skills.source]\ncrate_path = \"skills\"\n", 4, "sub-table"},
		{"source.crate in a group", "name = \"p\"\ndepends-on = \"a\"\n[[skills]]\nsource.crate = { name = \"a\" }\n", 3, "source.crate has no mechanical translation"},
		{"not an atom", "name = \"p\"\ncrates = [\"a b\"]\n[[skills]]\nsource = \"crate\"\n", 3, "is not a dependency atom"},
		{"not TOML", "name = \"p\"\ncrates = [\n", 2, "not valid TOML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := TOML([]byte(c.in))
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("want a refusal, got %q, %v", out, err)
			}
			if re.Line != c.line || !strings.Contains(re.Reason, c.reason) {
				t.Errorf("got line %d %q, want line %d containing %q", re.Line, re.Reason, c.line, c.reason)
			}
		})
	}
}

var skillCases = []struct {
	name, in, want string
	valid          bool
}{
	{
		name:  "crates scalar, comments kept",
		in:    "---\n# old skill\nname: s   # the name\ndescription: d\ncrates:   serde, tokio>=1   # gate\n---\n\nBody mentions crates: here.\n",
		want:  "---\n# old skill\nname: s   # the name\ndescription: d\ndepends-on:   serde, tokio>=1   # gate\n---\n\nBody mentions crates: here.\n",
		valid: true,
	},
	{
		name:  "quoted key and value",
		in:    "---\nname: s\ndescription: d\n\"crates\": \"serde\"\n---\n",
		want:  "---\nname: s\ndescription: d\ndepends-on: \"serde\"\n---\n",
		valid: true,
	},
	{
		name:  "block list",
		in:    "---\nname: s\ncrates:\n  - serde\n  - tokio\ndescription: d\n---\nbody\n",
		want:  "---\nname: s\ndepends-on: serde, tokio\ndescription: d\n---\nbody\n",
		valid: true,
	},
	{
		name:  "flow list with comment",
		in:    "---\nname: s\ndescription: d\ncrates: [serde, \"tokio\"]  # c\n---\n",
		want:  "---\nname: s\ndescription: d\ndepends-on: serde, tokio  # c\n---\n",
		valid: true,
	},
	{
		name:  "crate() in predicates",
		in:    "---\nname: s\ndescription: d\ndepends-on: serde\npredicates: not(crate(tokio)), env(X)  # crate(y) in a comment\n---\n",
		want:  "---\nname: s\ndescription: d\ndepends-on: serde\npredicates: not(depends-on(tokio)), env(X)  # crate(y) in a comment\n---\n",
		valid: true,
	},
	{
		name:  "leading blank lines and CRLF",
		in:    "\n---\r\nname: s\r\ndescription: d\r\ncrates: serde\r\n---\r\n",
		want:  "\n---\r\nname: s\r\ndescription: d\r\ndepends-on: serde\r\n---\r\n",
		valid: true,
	},
	{
		name: "no front matter",
		in:   "# Just markdown\ncrates: serde\n",
		want: "# Just markdown\ncrates: serde\n",
	},
}

func TestSkillMD(t *testing.T) {
	for _, c := range skillCases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := SkillMD([]byte(c.in))
			if err != nil {
				t.Fatalf("SkillMD: %v", err)
			}
			if string(out) != c.want {
				t.Errorf("got:\n%q\nwant:\n%q", out, c.want)
			}
			if c.valid {
				if _, err := skill.Parse(out, true); err != nil {
					t.Errorf("migrated SKILL.md does not parse: %v", err)
				}
			}
		})
	}
}

func TestSkillMDRefused(t *testing.T) {
	cases := []struct {
		name, in string
		line     int
		reason   string
	}{
		{"crates and depends-on", "---\nname: s\ndepends-on: a\ncrates: b\n---\n", 4, "both crates and depends-on"},
		{"list with a comment inside", "---\nname: s\ncrates:\n  - a # first\n  - b\n---\n", 3, "comments inside"},
		{"mapping", "---\nname: s\ncrates:\n  a: 1\n---\n", 3, "mapping"},
		{"bad yaml", "---\nname: s\ncrates: [a\n---\n", 2, "not valid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := SkillMD([]byte(c.in))
			var re *RefusedError
			if !errors.As(err, &re) {
				t.Fatalf("want a refusal, got %q, %v", out, err)
			}
			if re.Line != c.line || !strings.Contains(re.Reason, c.reason) {
				t.Errorf("got line %d %q, want line %d containing %q", re.Line, re.Reason, c.line, c.reason)
			}
		})
	}
}
