package manifest

import (
	"reflect"
	"strings"
	"testing"
)

func mustTOML(t *testing.T, src string) *Manifest {
	t.Helper()
	m, err := DecodeTOML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestValidateOrigins(t *testing.T) {
	m := mustTOML(t, "[defaults]\nskills = true\n")
	if _, ps := Validate(m, ValidateOptions{}); len(ps) == 0 || ps[0].Message != "manifest is missing name (a registry plugin must be named)" {
		t.Errorf("zero options must mean registry: %v", ps)
	}
	p, ps := Validate(m, ValidateOptions{Origin: OriginPackage, DefaultName: "crate-x"})
	if p == nil || p.Name != "crate-x" || len(p.Skills) != 0 || p.RequiresUse {
		t.Errorf("package origin: %+v %v", p, ps)
	}
	p, _ = Validate(m, ValidateOptions{Origin: OriginWorkspace, DefaultName: "member"})
	if p == nil || len(p.Skills) != 1 || p.Skills[0].Path != "skills" {
		t.Errorf("workspace origin without agents-syncing: %+v", p)
	}
	// The PM adds the default group (Embedded); package validation adds none.
	em, _ := Embedded("crate-y")
	p, _ = Validate(em, ValidateOptions{Origin: OriginPackage, DefaultName: "crate-y"})
	if p == nil || len(p.Skills) != 1 || p.Skills[0].Path != "skills" {
		t.Errorf("embedded default group: %+v", p)
	}
}

func TestValidateCollectsAllProblemsInOrder(t *testing.T) {
	m := mustTOML(t, `name = "p"
crates = ["a"]

[[installations]]
name = "dup"
executable = "x"

[[installations]]
name = "dup"
executable = "y"
script = "z"

[[hooks]]
name = "h"
event = "Stop"
command = "missing"

[subcommand.help]
description = "reserved"
command = "dup"

[[predicate]]
name = "not"
command = "dup"

[[skills]]
source = {}

[[plugins]]
source.cargo = "*"
`)
	_, ps := Validate(m, ValidateOptions{File: "SYMPOSIUM.toml"})
	var got []string
	for _, p := range ps {
		got = append(got, p.Error())
	}
	want := []string{
		`SYMPOSIUM.toml:9: installations[1].name: duplicate installation name "dup"`,
		`SYMPOSIUM.toml:8: installations[1]: installation "dup" sets both executable and script; they are mutually exclusive`,
		`SYMPOSIUM.toml:16: hooks[0].command: references unknown installation "missing"`,
		`SYMPOSIUM.toml:18: subcommand.help: subcommand name "help" is reserved by Symposium (reserved: init, sync, hook, plugin, crate-info, self-update, help)`,
		`SYMPOSIUM.toml:23: predicate[0].name: custom predicate name "not" is a builtin predicate`,
		`SYMPOSIUM.toml:2: crates: crates was renamed: write depends-on = ["a"]`,
		`SYMPOSIUM.toml:27: skills[0].source: source must set path or git`,
		`SYMPOSIUM.toml:30: plugins[0].source.cargo: source.cargo = "*" needs a crate name`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidateJSONProblemsHaveNoLines(t *testing.T) {
	m, err := DecodeJSON([]byte(`{"name":"p","depends-on":"x","hooks":[{"name":"h","event":"Stop","command":"nope"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, ps := Validate(m, ValidateOptions{})
	if len(ps) != 1 || ps[0].Line != 0 || ps[0].Error() != `hooks[0].command: references unknown installation "nope"` {
		t.Errorf("%v", ps)
	}
}

func TestValidateSyntheticNamesAndRequirements(t *testing.T) {
	m := mustTOML(t, `name = "p"
depends-on = "x"

[[installations]]
name = "tool"
requirements = [{ requirements = [{ install_commands = ["a"] }] }, "base"]
executable = "/bin/tool"

[[installations]]
name = "base"

[[hooks]]
name = "h"
event = "Stop"
command = { script = "s.sh" }
requirements = [{ install_commands = ["b"] }]

[subcommand.run]
description = "d"
command = { executable = "/bin/run" }

[[predicate]]
name = "check"
command = { executable = "/bin/check" }
`)
	p, ps := Validate(m, ValidateOptions{})
	if p == nil {
		t.Fatal(ps)
	}
	var names []string
	for _, in := range p.Installations {
		names = append(names, in.Name+"<"+strings.Join(in.Requirements, ",")+">")
	}
	want := []string{"tool<tool__req_0,base>", "base<>", "tool__req_0<tool__req_0__req_0>", "tool__req_0__req_0<>", "h<>", "h__req_0<>", "run<>", "__pred_check<>"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("installations = %v", names)
	}
	if got := p.Hooks[0].Requirements; !reflect.DeepEqual(got, []string{"h__req_0"}) {
		t.Errorf("hook requirements = %v", got)
	}
	if p.Subcommands["run"].Command != "run" || p.CustomPredicates[0].Command != "__pred_check" {
		t.Errorf("subcommand/predicate commands: %+v %+v", p.Subcommands, p.CustomPredicates)
	}
}

func TestDormancy(t *testing.T) {
	tests := []struct {
		src     string
		dormant bool
	}{
		{`name = "p"`, true},
		{"name = \"p\"\ndepends-on = [\"*\"]", false},
		{"name = \"p\"\npredicates = [\"my_pred(x)\"]", false},
		{"name = \"p\"\npredicates = [\"not(my_pred(x))\"]", true},
		{"name = \"p\"\npredicates = [\"env(X)\"]", true},
		{"name = \"p\"\npredicates = [\"not(depends-on(serde))\"]", false},
		{"name = \"p\"\n[[skills]]\npredicates = [\"any(env(X), depends-on(a))\"]\nsource.path = \"s\"", false},
		{"name = \"p\"\n[[skills]]\npredicates = [\"my_pred(x)\"]\nsource.path = \"s\"", true},
	}
	for _, tt := range tests {
		p, _ := Validate(mustTOML(t, tt.src), ValidateOptions{})
		if p == nil || p.RequiresUse != tt.dormant {
			t.Errorf("%q: plugin %+v, want dormant=%v", tt.src, p, tt.dormant)
		}
		for _, o := range []Origin{OriginWorkspace, OriginPackage} {
			if p, _ := Validate(mustTOML(t, tt.src), ValidateOptions{Origin: o}); p == nil || p.RequiresUse {
				t.Errorf("%q: origin %v is never dormant", tt.src, o)
			}
		}
	}
}

func TestEmbeddedMergeDetails(t *testing.T) {
	base := decodeTOMLTable(t, `
name = "base-name"
crates = ["old-base"]
[defaults]
skills = false
[[installations]]
name = "a"
[[hooks]]
name = "h1"
event = "Stop"
command = "a"
[[mcp_servers]]
name = "m1"
command = "c"
args = []
env = []
[[predicate]]
name = "p1"
command = "a"
[[plugins]]
source.cargo = "one"
`)
	over := decodeTOMLTable(t, `
crates = ["old-over"]
[defaults]
skills = true
[[installations]]
name = "b"
[[hooks]]
name = "h2"
event = "Stop"
command = "b"
[[mcp_servers]]
name = "m2"
command = "c"
args = []
env = []
[[predicate]]
name = "p2"
command = "b"
[[plugins]]
source.cargo = "two"
`)
	m, errs := Embedded("pkg", Layer{"base", base}, Layer{"over", over})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if m.Name != "base-name" {
		t.Errorf("a layer without name keeps the earlier one: %q", m.Name)
	}
	if *m.Defaults.Skills != true || len(m.Skills) != 1 {
		t.Errorf("over's defaults win: %+v %+v", m.Defaults, m.Skills)
	}
	if !reflect.DeepEqual(m.Extra["crates"], []any{"old-over"}) {
		t.Errorf("crates (over wins) = %v", m.Extra)
	}
	join := func(n int, f func(int) string) string {
		var s []string
		for i := range n {
			s = append(s, f(i))
		}
		return strings.Join(s, ",")
	}
	if got := join(len(m.Installations), func(i int) string { return m.Installations[i].Name }); got != "a,b" {
		t.Errorf("installations %s", got)
	}
	if got := join(len(m.Hooks), func(i int) string { return m.Hooks[i].Name }); got != "h1,h2" {
		t.Errorf("hooks %s", got)
	}
	if got := join(len(m.MCPServers), func(i int) string { return m.MCPServers[i].Name }); got != "m1,m2" {
		t.Errorf("mcp %s", got)
	}
	if got := join(len(m.Predicate), func(i int) string { return m.Predicate[i].Name }); got != "p1,p2" {
		t.Errorf("predicate %s", got)
	}
	if got := join(len(m.Plugins), func(i int) string { return m.Plugins[i].Source.Cargo.Atom }); got != "one,two" {
		t.Errorf("plugins %s", got)
	}
	// A validation failure of the merged manifest is not a layer error.
	dup := decodeTOMLTable(t, "[[installations]]\nname = \"a\"\n")
	m, errs = Embedded("pkg", Layer{"x", dup}, Layer{"y", dup})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if p, ps := Validate(m, ValidateOptions{Origin: OriginPackage, DefaultName: "pkg"}); p != nil || len(ps) == 0 {
		t.Error("duplicate installation across layers must fail validation")
	}
	// A JSON layer (package.json "symposium") with float64 numbers works too.
	m, errs = Embedded("npm-pkg", Layer{"package.json symposium", map[string]any{"depends-on": []any{"react"},
		"installations": []any{map[string]any{"name": "i", "weight": 1.5}}}})
	if len(errs) != 0 || m.Installations[0].Extra["weight"] != 1.5 || m.DependsOn.Atoms[0] != "react" {
		t.Errorf("JSON layer: %+v %v", m, errs)
	}
}

func TestParseGate(t *testing.T) {
	g, err := ParseGate(Atoms("serde", "tokio"), []string{"env(X)"})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(g.Strings(), " & "); got != "any(depends-on(serde), depends-on(tokio)) & env(X)" {
		t.Errorf("gate: %s", got)
	}
	if _, err := ParseGate(Atoms("serde>>1"), nil); err == nil {
		t.Error("bad atom accepted")
	}
	if _, err := ParseGate(DependsOn{}, []string{"env"}); err == nil {
		t.Error("bad predicate accepted")
	}
}
