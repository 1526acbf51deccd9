package manifest

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func compactJSON(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", b, err)
	}
	out, _ := marshalJSON(v)
	return string(out)
}

// A manifest using every table (the wire form is docs/manifests.md §10): the
// TOML form and the JSON form decode to the same value, and the wire JSON
// equals the JSON document.
func TestReferenceExampleTOMLAndJSONAgree(t *testing.T) {
	mt, err := DecodeTOML(readFile(t, "testdata/valid/gizmo.toml"))
	if err != nil {
		t.Fatal(err)
	}
	mj, err := DecodeJSON(readFile(t, "testdata/gizmo-wire.json"))
	if err != nil {
		t.Fatal(err)
	}
	wt, err := mt.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	wj, err := mj.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	if string(wt) != string(wj) {
		t.Errorf("TOML and JSON decode differently:\n%s\n%s", wt, wj)
	}
	if got, want := string(wt), compactJSON(t, readFile(t, "testdata/gizmo-wire.json")); got != want {
		t.Errorf("wire JSON:\n got %s\nwant %s", got, want)
	}
	mt.lines = nil
	if !reflect.DeepEqual(mt, mj) {
		t.Errorf("typed values differ:\n%#v\n%#v", mt, mj)
	}
	if mt.Hooks[1].Command.Inline == nil || mt.Hooks[1].Command.Inline.Script != "scripts/after.sh" {
		t.Errorf("inline hook command not decoded: %#v", mt.Hooks[1].Command)
	}
	if c := mt.Plugins[1].Source.Cargo; c.Name != "gizmo-extras" || c.Version != "^1" {
		t.Errorf("cargo table form: %#v", c)
	}
	if !mt.Skills[0].DependsOn.Single {
		t.Error("single-string depends-on not kept")
	}
}

func TestUnknownKeysKeptAndRoundTrip(t *testing.T) {
	src := `name = "x"
future = { a = 1, b = [1.5, "s"], when = 1979-05-27 }
[[installations]]
name = "i"
shiny = true
[[mcp_servers]]
name = "m"
command = "c"
args = []
env = [{ name = "A", value = "", extra = 3 }]
transport_opts = { k = "v" }
`
	m, err := DecodeTOML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Extra["future"]; !ok {
		t.Fatalf("unknown top-level key dropped: %#v", m.Extra)
	}
	if m.Installations[0].Extra["shiny"] != true {
		t.Errorf("unknown installation key dropped: %#v", m.Installations[0].Extra)
	}
	j1, err := m.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	tb, err := EncodeTOML(m)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := DecodeTOML(tb)
	if err != nil {
		t.Fatalf("re-decoding %s: %v", tb, err)
	}
	j2, _ := m2.WireJSON()
	m3, err := DecodeJSON(j2)
	if err != nil {
		t.Fatal(err)
	}
	j3, _ := m3.WireJSON()
	if string(j1) != string(j2) || string(j2) != string(j3) {
		t.Errorf("round trip unstable:\n%s\n%s\n%s", j1, j2, j3)
	}
	if !strings.Contains(string(j1), `"when":"1979-05-27"`) {
		t.Errorf("TOML date not rendered as its text: %s", j1)
	}
}

// EncodeTOML's layout: plain keys first, then tables and arrays of tables,
// keys sorted at every level, the same bytes on every run.
func TestEncodeTOMLLayout(t *testing.T) {
	src := `name = "p"
depends-on = "x"

[[hooks]]
name = "h"
event = "Stop"
command = { script = "after.sh", args = ["--quiet"] }
requirements = ["base", { install_commands = ["echo it's here"] }]

[subcommand.zz]
description = "last"
command = "base"

[subcommand.aa]
description = "first"
command = "base"

[[installations]]
name = "base"
install_commands = ["true"]

[future]
when = 1979-05-27
`
	want := `depends-on = 'x'
name = 'p'

[future]
when = '1979-05-27'

[[hooks]]
event = 'Stop'
name = 'h'
requirements = ['base', {install_commands = ["echo it's here"]}]

[hooks.command]
args = ['--quiet']
script = 'after.sh'

[[installations]]
install_commands = ['true']
name = 'base'

[subcommand]
[subcommand.aa]
command = 'base'
description = 'first'

[subcommand.zz]
command = 'base'
description = 'last'
`
	m, err := DecodeTOML([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		got, err := EncodeTOML(m)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("got:\n%s\nwant:\n%s", got, want)
		}
	}
}

// Every kind of TOML date and time reaches the wire as its TOML text,
// fractional seconds written only as far as they are nonzero.
func TestTOMLDatesAsText(t *testing.T) {
	for _, tc := range []struct{ toml, want string }{
		{"1979-05-27", "1979-05-27"},
		{"07:32:00", "07:32:00"},
		{"07:32:00.500", "07:32:00.5"},
		{"1979-05-27T07:32:00", "1979-05-27T07:32:00"},
		{"1979-05-27T07:32:00.999999", "1979-05-27T07:32:00.999999"},
		{"1979-05-27T07:32:00Z", "1979-05-27T07:32:00Z"},
		{"1979-05-27T00:32:00.25-07:00", "1979-05-27T00:32:00.25-07:00"},
		{"1979-05-27 07:32:00+01:30", "1979-05-27T07:32:00+01:30"},
	} {
		m, err := DecodeTOML([]byte("name = \"x\"\nwhen = " + tc.toml + "\n"))
		if err != nil {
			t.Errorf("%s: %v", tc.toml, err)
			continue
		}
		if got := m.Extra["when"]; got != tc.want {
			t.Errorf("%s decoded to %#v, want %q", tc.toml, got, tc.want)
		}
	}
}

func TestDecodeTypeErrorsHaveLines(t *testing.T) {
	src := "name = \"x\"\n\n[[hooks]]\nname = \"h\"\nargs = \"not-an-array\"\n"
	_, err := DecodeTOML([]byte(src))
	var ps Problems
	if !errorsAs(err, &ps) || len(ps) != 1 {
		t.Fatalf("want one problem, got %v", err)
	}
	if ps[0].Field != "hooks[0].args" || ps[0].Line != 5 || !strings.Contains(ps[0].Message, "expected an array of strings, found a string") {
		t.Errorf("got %+v", ps[0])
	}
	if _, err := DecodeTOML([]byte("name = \n")); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("syntax error without line: %v", err)
	}
	if _, err := DecodeJSON([]byte(`[1]`)); err == nil || !strings.Contains(err.Error(), "must be a JSON object") {
		t.Errorf("non-object JSON: %v", err)
	}
	for data, want := range map[string]string{
		"{\n  \"name\": \"x\",\n}": "line 3: column 1: invalid JSON: invalid character '}' looking for beginning of object key string",
		"{\n  \"name\": ":          "line 2: column 11: invalid JSON: unexpected end of file",
		"":                         "line 1: column 1: invalid JSON: unexpected end of file",
	} {
		if _, err := DecodeJSON([]byte(data)); err == nil || err.Error() != want {
			t.Errorf("DecodeJSON(%q) = %v, want %q", data, err, want)
		}
	}
	if _, err := DecodeJSON([]byte(`{} {}`)); err == nil {
		t.Error("trailing JSON accepted")
	}
}

func errorsAs(err error, ps *Problems) bool {
	p, ok := err.(Problems)
	if ok {
		*ps = p
	}
	return ok
}

func decodeTOMLTable(t *testing.T, src string) map[string]any {
	t.Helper()
	var tbl map[string]any
	if err := toml.Unmarshal([]byte(src), &tbl); err != nil {
		t.Fatal(err)
	}
	return tbl
}

func TestEmbedded(t *testing.T) {
	meta := decodeTOMLTable(t, `
depends-on = "a"
predicates = ["env(X)"]
[[skills]]
source.path = "guidance"
[subcommand.one]
description = "from metadata"
command = "x"
[subcommand.two]
description = "only metadata"
command = "x"
`)
	file := decodeTOMLTable(t, `
name = "renamed"
depends-on = ["b"]
predicates = ["env(Y)"]
[[skills]]
source.path = "agent-docs"
[subcommand.one]
description = "from file"
command = "y"
`)
	m, errs := Embedded("pkg", Layer{"metadata", meta}, Layer{"absent", nil}, Layer{"SYMPOSIUM.toml", file})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if m.Name != "renamed" {
		t.Errorf("name = %q", m.Name)
	}
	if !reflect.DeepEqual(m.DependsOn.Atoms, []string{"a", "b"}) || m.DependsOn.Single {
		t.Errorf("depends-on = %#v", m.DependsOn)
	}
	if !reflect.DeepEqual(m.Predicates, []string{"env(X)", "env(Y)"}) {
		t.Errorf("predicates = %#v", m.Predicates)
	}
	var paths []string
	for _, g := range m.Skills {
		paths = append(paths, g.Source.Path)
	}
	if !reflect.DeepEqual(paths, []string{"guidance", "agent-docs", "skills"}) {
		t.Errorf("skill groups = %v", paths)
	}
	if m.Subcommand["one"].Description != "from file" || m.Subcommand["two"].Description != "only metadata" {
		t.Errorf("subcommands = %#v", m.Subcommand)
	}

	// A bad layer is dropped and reported; defaults still apply.
	bad := decodeTOMLTable(t, `skills = "not-an-array"`)
	m, errs = Embedded("crate-x", Layer{"Cargo.toml [package.metadata.symposium]", bad})
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "Cargo.toml [package.metadata.symposium]: layer ignored: skills: expected an array of tables") {
		t.Errorf("errs = %v", errs)
	}
	w, _ := m.WireJSON()
	if string(w) != `{"name":"crate-x","skills":[{"source":{"path":"skills"}}]}` {
		t.Errorf("wire = %s", w)
	}

	// Unknown keys and bad atoms are parse errors that drop the layer.
	for _, src := range []string{`version = "1"`, `depends-on = "serde, tokio"`, `predicates = ["crate(serde)"]`} {
		_, errs = Embedded("p", Layer{"l", decodeTOMLTable(t, src)})
		if len(errs) != 1 {
			t.Errorf("%s: errs = %v", src, errs)
		}
	}

	// Opt-out.
	m, _ = Embedded("p", Layer{"l", decodeTOMLTable(t, "[defaults]\nskills = false\n")})
	if len(m.Skills) != 0 {
		t.Errorf("opt-out ignored: %#v", m.Skills)
	}
	// No layers: just the default group.
	m, _ = Embedded("p")
	if w, _ := m.WireJSON(); string(w) != `{"name":"p","skills":[{"source":{"path":"skills"}}]}` {
		t.Errorf("no layers: %s", w)
	}
}

func TestManifestEmbedsInJSON(t *testing.T) {
	m := Manifest{Name: "x", DependsOn: Atoms("serde")}
	type offer struct {
		Manifest Manifest  `json:"manifest"`
		Pointer  *Manifest `json:"pointer"`
	}
	b, err := json.Marshal(offer{Manifest: m, Pointer: &m})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"manifest":{"depends-on":["serde"],"name":"x"},"pointer":{"depends-on":["serde"],"name":"x"}}`
	if string(b) != want {
		t.Errorf("got %s", b)
	}
	var back offer
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Manifest.Name != "x" || back.Pointer.DependsOn.Atoms[0] != "serde" {
		t.Errorf("decoded %+v", back)
	}
}

// Every problem DecodeJSON and FromTable report names its field, however
// deep: decoding without field paths (decodeTree's first pass) must not
// lose them.
func TestDecodeProblemsNameNestedFields(t *testing.T) {
	src := `{"name": 1,
	  "defaults": {"skills": "yes"},
	  "installations": [{"name": "a", "global": "no", "requirements": ["b", {"args": [1]}]}],
	  "hooks": [{"name": "h"}, {"command": {"args": [true]}, "predicates": "p"}],
	  "skills": [{"source": {"path": 2, "git": "g"}}, "s"],
	  "mcp_servers": [{"env": [{"name": "N", "value": 3}], "headers": [{"name": []}]}],
	  "subcommand": {"x": {"description": false}, "y": 1},
	  "predicate": [{"command": 5}],
	  "plugins": [{"source": []}]}`
	want := []string{
		"defaults.skills: expected a boolean, found a string",
		"hooks[1].command.args[0]: expected a string, found a boolean",
		"hooks[1].predicates: expected an array of strings, found a string",
		"installations[0].global: expected a boolean, found a string",
		"installations[0].requirements[1].args[0]: expected a string, found an integer",
		"mcp_servers[0].env[0].value: expected a string, found an integer",
		"mcp_servers[0].headers[0].name: expected a string, found an array",
		"name: expected a string, found an integer",
		"plugins[0].source: expected a table, found an array",
		"predicate[0].command: expected an installation name or an inline installation table, found an integer",
		"skills[0].source.path: expected a string, found an integer",
		"skills[1]: expected a table, found a string",
		"subcommand.x.description: expected a string, found a boolean",
		"subcommand.y: expected a table, found an integer",
	}
	_, jerr := DecodeJSON([]byte(src))
	dec := json.NewDecoder(strings.NewReader(src))
	dec.UseNumber()
	var tree map[string]any
	if err := dec.Decode(&tree); err != nil {
		t.Fatal(err)
	}
	_, terr := FromTable(tree)
	for _, err := range []error{jerr, terr} {
		var ps Problems
		if !errorsAs(err, &ps) {
			t.Fatalf("want problems, got %v", err)
		}
		var got []string
		for _, p := range ps {
			got = append(got, p.Field+": "+p.Message)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("problems:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestTOMLDateIsNotAString: a key the schema types as a string refuses a
// TOML date, as Symposium's decoder does; unknown keys keep dates as their
// text (TestTOMLDatesAsText).
func TestTOMLDateIsNotAString(t *testing.T) {
	for _, doc := range []string{"name = 1979-05-27\n", "name = \"x\"\ndepends-on = 2024-01-01\n", "name = \"x\"\ndepends-on = [\"a\", 07:32:00]\n"} {
		_, err := DecodeTOML([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), "a date or time") {
			t.Errorf("%q: %v; want a type error naming the date", doc, err)
		}
	}
}
