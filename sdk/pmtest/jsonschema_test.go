package pmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// The schema check's validator (jsonschema.go) is held to a general
// validator, santhosh-tekuri/jsonschema, as an oracle: both must give the
// same verdict on every instance. The oracle is a test dependency only.

// oracle compiles every definition of the protocol schema with the
// general validator.
func oracle(t testing.TB) map[string]*jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(protocol.SchemaJSON()))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource(protocol.SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]*jsonschema.Schema{}
	for _, d := range schemaDefs(t) {
		if out[d], err = c.Compile(protocol.SchemaID + "#/$defs/" + d); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// schemaDefs names every definition of the protocol schema, sorted.
func schemaDefs(t testing.TB) []string {
	t.Helper()
	var doc struct {
		Defs map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(protocol.SchemaJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n := range doc.Defs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// compiled compiles the protocol schema with the check's validator.
func compiled(t testing.TB) *schemaSet {
	t.Helper()
	set, err := compileSchema(protocol.SchemaJSON())
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// corpusLine is an instance and the definition it is meant for.
type corpusLine struct {
	def  string
	line []byte
}

// schemaCorpus gathers the instances the pmtest and protocol tests
// validate: the lines of TestSchemaLog, the manifest wire forms, requests
// built from the Go parameter types, and diagnostics good and bad.
func schemaCorpus(t testing.TB) []corpusLine {
	t.Helper()
	var out []corpusLine
	add := func(def string, line string) { out = append(out, corpusLine{def, []byte(line)}) }
	for _, c := range schemaLogCases {
		methods := map[string]string{}
		for _, r := range c.requests {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal([]byte(r), &req)
			methods[framing.IDKey(req.ID)] = req.Method
			if slices.Contains(protocol.Methods, req.Method) {
				add(strings.TrimSuffix(responseDef(req.Method), "Response")+"Request", r)
			}
		}
		for _, a := range c.answers {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method *string         `json:"method"`
			}
			json.Unmarshal([]byte(a), &msg)
			key := framing.IDKey(msg.ID)
			switch m := methods[key]; {
			case msg.Method != nil && msg.ID == nil:
				add("DiagnosticNotification", a)
			case key == "":
				add("NullIDResponse", a)
			case slices.Contains(protocol.Methods, m):
				add(responseDef(m), a)
			default:
				add("Response", a)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "manifest", "testdata", "golden", "*.wire.json"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "manifest", "testdata", "gizmo-wire.json"))
	if len(files) < 10 {
		t.Fatalf("found only %d manifest wire forms", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		add("Manifest", string(b))
	}
	add("Manifest", `{"name":"x","skills":[{"source":{"path":7}}]}`)
	id := protocol.PackageID{PM: "cargo", Name: "serde", Version: "^1"}
	params := map[string]any{
		protocol.MethodInitialize:    protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: "/w", CacheDir: "/c", Env: map[string]string{"HOME": "/h"}},
		protocol.MethodActivePlugins: protocol.ActivePluginsParams{Deps: []protocol.PackageID{id}},
		protocol.MethodLoadPlugin:    protocol.LoadPluginParams{ID: id},
		protocol.MethodListDeps:      struct{}{},
		protocol.MethodSearch:        protocol.SearchParams{Query: "serde"},
		protocol.MethodFetch:         protocol.FetchParams{ID: id, Update: protocol.UpdateCheck},
		protocol.MethodRefresh:       protocol.RefreshParams{Update: protocol.UpdateNone, Force: true},
		protocol.MethodWorkspace:     struct{}{},
	}
	for i, m := range protocol.Methods {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": m, "params": params[m]})
		if err != nil {
			t.Fatal(err)
		}
		def := responseDef(m)
		add(strings.TrimSuffix(def, "Response")+"Request", string(b))
	}
	for _, d := range []protocol.Diagnostic{
		{Request: json.RawMessage(`3`), Message: "dropped"},
		{Request: json.RawMessage(`"a"`), Level: protocol.LevelInfo, Message: "m", File: "/w/package.json", Line: 2,
			Package: &protocol.PackageID{PM: "npm", Name: "x", Version: "1.0.0"}},
	} {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": protocol.MethodDiagnostic, "params": d})
		add("DiagnosticNotification", string(b))
	}
	for _, b := range []string{
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"message":"no request"}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":""}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","level":"loud"}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","line":0}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","extra":true}}`,
		`{"jsonrpc":"2.0","id":1,"method":"diagnostic","params":{"request":1,"message":"m"}}`,
	} {
		add("DiagnosticNotification", b)
	}
	return out
}

// verdicts validates line against def with both validators and returns
// whether each accepts it; ok is false when the line is not JSON to both.
func verdicts(t testing.TB, set *schemaSet, orc map[string]*jsonschema.Schema, def string, line []byte) (ours, theirs, ok bool) {
	t.Helper()
	inst, err := decodeJSON(line)
	oinst, oerr := jsonschema.UnmarshalJSON(bytes.NewReader(line))
	if (err == nil) != (oerr == nil) {
		t.Fatalf("%s: JSON verdicts differ: ours %v, oracle %v", line, err, oerr)
	}
	if err != nil {
		return false, false, false
	}
	causes, err := set.validate(def, inst)
	if err != nil {
		t.Fatal(err)
	}
	return len(causes) == 0, orc[def].Validate(oinst) == nil, true
}

// TestSchemaValidatorMatchesOracle validates every corpus instance against
// every definition, and generated mutations of each against its own
// definition, with both validators, and requires the same verdicts.
func TestSchemaValidatorMatchesOracle(t *testing.T) {
	set, orc := compiled(t), oracle(t)
	defs := schemaDefs(t)
	corpus := schemaCorpus(t)
	strs := schemaStrings(t)
	accepted, rejected := 0, 0
	check := func(def string, line []byte) {
		ours, theirs, ok := verdicts(t, set, orc, def, line)
		if !ok {
			return
		}
		if ours != theirs {
			inst, _ := decodeJSON(line)
			causes, _ := set.validate(def, inst)
			t.Errorf("$defs/%s on %s: ours accepts=%v (%s), oracle accepts=%v", def, line, ours, violationCauses(causes, nil), theirs)
		}
		if ours {
			accepted++
		} else {
			rejected++
		}
	}
	for _, c := range corpus {
		for _, d := range defs {
			check(d, c.line)
		}
	}
	mutations := 0
	for _, c := range corpus {
		v, err := decodeJSON(c.line)
		if err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		for _, m := range mutants(v, strs) {
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			mutations++
			check(c.def, b)
		}
	}
	t.Logf("%d corpus lines × %d definitions, %d mutations: %d accepted, %d rejected", len(corpus), len(defs), mutations, accepted, rejected)
	if mutations < 1000 || accepted < 100 || rejected < 100 {
		t.Errorf("the corpus is too thin: %d mutations, %d accepted, %d rejected", mutations, accepted, rejected)
	}
}

// schemaStrings are the string constants and enum values of the schema,
// for mutations to try in place of a value.
func schemaStrings(t testing.TB) []string {
	t.Helper()
	root, err := decodeJSON(protocol.SchemaJSON())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if s, ok := x["const"].(string); ok {
				seen[s] = true
			}
			if e, ok := x["enum"].([]any); ok {
				for _, s := range e {
					if s, ok := s.(string); ok {
						seen[s] = true
					}
				}
			}
			for _, e := range x {
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(root)
	var out []string
	for s := range seen {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// mutants returns copies of v with one change each: a value replaced by
// one of a set of values of every type (and the schema's strings, in place
// of a string), an object member removed or added, an array element
// removed or repeated.
func mutants(v any, strs []string) []any {
	repl := []any{nil, true, false, json.Number("0"), json.Number("-1"), json.Number("1.5"), json.Number("2.0"),
		json.Number("1e400"), "", "x", []any{}, map[string]any{}}
	if _, ok := v.(string); ok {
		for _, s := range strs {
			repl = append(repl, s)
		}
	}
	out := slices.Clone(repl)
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			without := map[string]any{}
			for k2, e := range x {
				if k2 != k {
					without[k2] = e
				}
			}
			out = append(out, without)
			for _, m := range mutants(x[k], strs) {
				c := map[string]any{}
				for k2, e := range x {
					c[k2] = e
				}
				c[k] = m
				out = append(out, c)
			}
		}
		c := map[string]any{"zz": json.Number("1")}
		for k2, e := range x {
			c[k2] = e
		}
		out = append(out, c)
	case []any:
		if len(x) > 0 {
			out = append(out, slices.Clone(x[1:]), append(slices.Clone(x), x[0]))
		}
		for _, s := range strs {
			out = append(out, []any{s}, []any{s, s})
		}
		for i, e := range x {
			for _, m := range mutants(e, strs) {
				c := slices.Clone(x)
				c[i] = m
				out = append(out, c)
			}
		}
	}
	return out
}

// FuzzSchemaVerdict validates arbitrary lines against the response and
// notification definitions the schema check uses, and the manifest, with
// both validators; the verdicts must agree.
func FuzzSchemaVerdict(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"result":[]}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","line":1}}`,
		`{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"x","capabilities":[]}}`,
		`{"name":"x","skills":[{"source":{"path":"p"}}]}`,
		`[1,1.0,1e2]`,
	} {
		f.Add([]byte(s))
	}
	set, orc := compiled(f), oracle(f)
	defs := []string{"NullIDResponse", "DiagnosticNotification", "Manifest", "Response", "Request"}
	for _, m := range protocol.Methods {
		defs = append(defs, responseDef(m))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		for _, d := range defs {
			if ours, theirs, ok := verdicts(t, set, orc, d, line); !ok {
				return
			} else if ours != theirs {
				t.Errorf("$defs/%s on %q: ours accepts=%v, oracle accepts=%v", d, line, ours, theirs)
			}
		}
	})
}

// TestDecimal checks the number comparisons behind integer, minimum,
// const, enum and uniqueItems.
func TestDecimal(t *testing.T) {
	for _, tt := range []struct {
		a, b  string
		cmp   int
		isInt bool // of a
	}{
		{"1", "1.0", 0, true},
		{"1.0", "1", 0, true},
		{"10", "1e1", 0, true},
		{"0", "-0.0", 0, true},
		{"-1", "0", -1, true},
		{"1.5", "1", 1, false},
		{"0.001", "1E-3", 0, false},
		{"123", "12.3e1", 0, true},
		{"-2", "-10", 1, true},
		{"1e999999999999999999999", "1", 1, true},
		{"1e-999999999999999999999", "0", 1, false},
		{"-5e-1", "-0.5", 0, false},
		{"2.5e1", "25", 0, true},
		{"0.12", "0.123", -1, false},
	} {
		a, ok1 := parseDecimal(tt.a)
		b, ok2 := parseDecimal(tt.b)
		if !ok1 || !ok2 {
			t.Fatalf("%s or %s did not parse", tt.a, tt.b)
		}
		if got := a.cmp(b); got != tt.cmp {
			t.Errorf("cmp(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.cmp)
		}
		if got := b.cmp(a); got != -tt.cmp {
			t.Errorf("cmp(%s, %s) = %d, want %d", tt.b, tt.a, got, -tt.cmp)
		}
		if got := a.isInt(); got != tt.isInt {
			t.Errorf("isInt(%s) = %v, want %v", tt.a, got, tt.isInt)
		}
	}
}

// TestCompileSchemaRefuses checks that a schema using what the validator
// does not implement is refused, not validated loosely.
func TestCompileSchemaRefuses(t *testing.T) {
	for _, tt := range []struct{ doc, want string }{
		{`{"$defs":{"A":{"pattern":"x"}}}`, `#/$defs/A: keyword "pattern" is not supported`},
		{`{"$defs":{"A":{"$ref":"other.json#/x"}}}`, `$ref "other.json#/x": only references to a definition`},
		{`{"$defs":{"A":{"$ref":"#/$defs/B"}}}`, `$ref "#/$defs/B"`},
		{`{"$schema":"http://json-schema.org/draft-07/schema#"}`, `only draft 2020-12`},
		{`{"$defs":{"A":{"type":"integr"}}}`, `unknown type "integr"`},
		{`{"$defs":{"A":{"properties":{"x":{"minLength":-1}}}}}`, `#/$defs/A/properties/x/minLength: must be a non-negative integer`},
		{`{"$defs":{"A":{"anyOf":[]}}}`, `#/$defs/A/anyOf: must be a non-empty array`},
		{`[]`, `not a JSON object`},
	} {
		_, err := compileSchema([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("compileSchema(%s) = %v, want an error containing %q", tt.doc, err, tt.want)
		}
	}
}

// TestSchemaCauseMessages checks that each keyword's failure names where
// the value is and what is wrong with it.
func TestSchemaCauseMessages(t *testing.T) {
	set := compiled(t)
	for _, tt := range []struct{ def, line, want string }{
		{"InitializeResponse", `{"jsonrpc":"2.0","id":1,"result":{"protocol_version":0,"name":"x","capabilities":[]}}`,
			"at /result/protocol_version: must be >= 1 but found 0"},
		{"InitializeResponse", `{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1.5,"name":"x","capabilities":[]}}`,
			"at /result/protocol_version: got number, want integer"},
		{"InitializeResponse", `{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"","capabilities":[]}}`,
			"at /result/name: minLength: got 0, want 1"},
		{"InitializeResponse", `{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"x","capabilities":["search","search"]}}`,
			"at /result/capabilities: items at 0 and 1 are equal"},
		{"InitializeResponse", `{"jsonrpc":"2.0","id":true,"result":{"protocol_version":1,"name":"x","capabilities":[]}}`,
			"at /id: got boolean, want string or integer"},
		{"DiagnosticNotification", `{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","level":"loud"}}`,
			"at /params/level: value must be one of 'warning', 'info'"},
		{"DiagnosticNotification", `{"jsonrpc":"1.0","method":"diagnostic","params":{}}`,
			"at /jsonrpc: value must be '2.0'"},
		{"DiagnosticNotification", `{"jsonrpc":"2.0","method":"diagnostic","params":{}}`,
			"at /params: missing properties 'request', 'message'"},
		{"SearchResponse", `{"jsonrpc":"2.0","id":1}`,
			"at /: missing property 'error'; at /: missing property 'result'"},
	} {
		inst, err := decodeJSON([]byte(tt.line))
		if err != nil {
			t.Fatal(err)
		}
		causes, err := set.validate(tt.def, inst)
		if got := violationCauses(causes, err); !strings.Contains(got, tt.want) {
			t.Errorf("$defs/%s on %s:\n got %s\nwant %s", tt.def, tt.line, got, tt.want)
		}
	}
}

// TestCanonicalEquality checks that canonical forms are equal exactly when
// the values are equal in the JSON Schema sense, which uniqueItems relies on.
func TestCanonicalEquality(t *testing.T) {
	for _, tt := range []struct {
		a, b  string
		equal bool
	}{
		{`1`, `1.0`, true},
		{`1`, `"1"`, false},
		{`{"a":1,"b":[2,{"c":null}]}`, `{"b":[2.0,{"c":null}],"a":1e0}`, true},
		{`{"a":1}`, `{"a":1,"b":1}`, false},
		{`[1,2]`, `[2,1]`, false},
		{`"a\"b"`, `"a\"b"`, true},
		{`true`, `1`, false},
		{`null`, `{}`, false},
		{`-0`, `0`, true},
		{`{"a,b":1}`, `{"a":1,"b":1}`, false},
	} {
		a, err1 := decodeJSON([]byte(tt.a))
		b, err2 := decodeJSON([]byte(tt.b))
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		if got := canonical(a) == canonical(b); got != tt.equal || schemaEqual(a, b) != tt.equal {
			t.Errorf("%s vs %s: canonical equal %v, schemaEqual %v, want %v", tt.a, tt.b, got, schemaEqual(a, b), tt.equal)
		}
	}
	// A long array with its only duplicate at the end.
	var caps []string
	for i := range 50000 {
		caps = append(caps, fmt.Sprintf(`"c%d"`, i))
	}
	line := `{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"x","capabilities":[` + strings.Join(caps, ",") + `,"c7"]}}`
	inst, err := decodeJSON([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	causes, err := compiled(t).validate("InitializeResponse", inst)
	if got := violationCauses(causes, err); got != "at /result/capabilities: items at 7 and 50000 are equal" {
		t.Errorf("got %s", got)
	}
}

// TestNoSchemaLibraryLinked keeps general JSON Schema libraries out of what
// pmtest links into binaries (symposium-pm among them): their package init
// runs at every start, hook path included. Tests may use them.
func TestNoSchemaLibraryLinked(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goTool, "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.Contains(dep, "jsonschema") {
			t.Errorf("pmtest links %s", dep)
		}
	}
}
