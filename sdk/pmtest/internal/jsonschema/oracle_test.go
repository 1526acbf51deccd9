package jsonschema

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	oracle "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/internal/schemacases"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// The validator is held to a general one, santhosh-tekuri/jsonschema, as an
// oracle: both must give the same verdict on every instance. The oracle is
// a dependency of this package's tests only: linked into no binary, and not
// into pmtest's test binary, which re-executes itself as a PM.

// compileOracle compiles every definition of the protocol schema with the
// general validator.
func compileOracle(t testing.TB) map[string]*oracle.Schema {
	t.Helper()
	doc, err := oracle.UnmarshalJSON(bytes.NewReader(protocol.SchemaJSON()))
	if err != nil {
		t.Fatal(err)
	}
	c := oracle.NewCompiler()
	c.DefaultDraft(oracle.Draft2020)
	if err := c.AddResource(protocol.SchemaID, doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]*oracle.Schema{}
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

// methodDefs reads from the schema the request and the response
// definition of each method of the protocol: <Name>Request is the
// definition whose "method" is the method's constant, <Name>Response the
// definition of its answer.
func methodDefs(t testing.TB) (requests, responses map[string]string) {
	t.Helper()
	var doc struct {
		Defs map[string]struct {
			Properties struct {
				Method struct {
					Const string `json:"const"`
				} `json:"method"`
			} `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(protocol.SchemaJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	requests, responses = map[string]string{}, map[string]string{}
	for name, d := range doc.Defs {
		base, ok := strings.CutSuffix(name, "Request")
		if m := d.Properties.Method.Const; ok && m != "" {
			requests[m], responses[m] = name, base+"Response"
		}
	}
	for _, m := range protocol.Methods {
		if _, ok := doc.Defs[responses[m]]; requests[m] == "" || !ok {
			t.Fatalf("method %s: the schema has no request or no response definition (%q, %q)", m, requests[m], responses[m])
		}
	}
	return requests, responses
}

// corpusLine is an instance and the definition it is meant for.
type corpusLine struct {
	def  string
	line []byte
}

// schemaCorpus gathers the instances the pmtest and protocol tests
// validate: the lines of pmtest's TestSchemaLog (package schemacases), the
// manifest wire forms, requests built from the Go parameter types, and
// diagnostics good and bad.
func schemaCorpus(t testing.TB) []corpusLine {
	t.Helper()
	requestDef, responseDef := methodDefs(t)
	var out []corpusLine
	add := func(def string, line string) { out = append(out, corpusLine{def, []byte(line)}) }
	for _, c := range schemacases.Exchanges() {
		methods := map[string]string{}
		for _, r := range c.Requests {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			json.Unmarshal([]byte(r), &req)
			methods[framing.IDKey(req.ID)] = req.Method
			if slices.Contains(protocol.Methods, req.Method) {
				add(requestDef[req.Method], r)
			}
		}
		for _, a := range c.Answers {
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
				add(responseDef[m], a)
			default:
				add("Response", a)
			}
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "manifest", "testdata", "golden", "*.wire.json"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "..", "..", "manifest", "testdata", "gizmo-wire.json"))
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
	reqs := schemacases.GoRequests()
	for _, m := range protocol.Methods {
		b := reqs[m]
		add(requestDef[m], string(b))
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
func verdicts(t testing.TB, set *Schema, orc map[string]*oracle.Schema, def string, line []byte) (ours, theirs, ok bool) {
	t.Helper()
	inst, err := Decode(line)
	oinst, oerr := oracle.UnmarshalJSON(bytes.NewReader(line))
	if (err == nil) != (oerr == nil) {
		t.Fatalf("%s: JSON verdicts differ: ours %v, oracle %v", line, err, oerr)
	}
	if err != nil {
		return false, false, false
	}
	causes, err := set.Validate(def, inst)
	if err != nil {
		t.Fatal(err)
	}
	return len(causes) == 0, orc[def].Validate(oinst) == nil, true
}

// TestSchemaValidatorMatchesOracle validates every corpus instance against
// every definition, and generated mutations of each against its own
// definition, with both validators, and requires the same verdicts.
func TestSchemaValidatorMatchesOracle(t *testing.T) {
	set, orc := compiled(t), compileOracle(t)
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
			inst, _ := Decode(line)
			causes, _ := set.Validate(def, inst)
			t.Errorf("$defs/%s on %s: ours accepts=%v (%s), oracle accepts=%v", def, line, ours, Describe(causes), theirs)
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
		v, err := Decode(c.line)
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
	root, err := Decode(protocol.SchemaJSON())
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
	set, orc := compiled(f), compileOracle(f)
	_, responseDef := methodDefs(f)
	defs := []string{"NullIDResponse", "DiagnosticNotification", "Manifest", "Response", "Request"}
	for _, m := range protocol.Methods {
		defs = append(defs, responseDef[m])
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
