package jsonschema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// compiled compiles the protocol schema with this package's validator.
func compiled(t testing.TB) *Schema {
	t.Helper()
	set, err := Compile(protocol.SchemaJSON())
	if err != nil {
		t.Fatal(err)
	}
	return set
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
		_, err := Compile([]byte(tt.doc))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%s) = %v, want an error containing %q", tt.doc, err, tt.want)
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
		inst, err := Decode([]byte(tt.line))
		if err != nil {
			t.Fatal(err)
		}
		causes, err := set.Validate(tt.def, inst)
		if err != nil {
			t.Fatal(err)
		}
		if got := Describe(causes); !strings.Contains(got, tt.want) {
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
		a, err1 := Decode([]byte(tt.a))
		b, err2 := Decode([]byte(tt.b))
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
	inst, err := Decode([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	causes, err := compiled(t).Validate("InitializeResponse", inst)
	if err != nil {
		t.Fatal(err)
	}
	if got := Describe(causes); got != "at /result/capabilities: items at 7 and 50000 are equal" {
		t.Errorf("got %s", got)
	}
}

func TestJSONPointer(t *testing.T) {
	for _, tt := range []struct {
		tokens []string
		want   string
	}{{nil, "/"}, {[]string{"result", "0", "id"}, "/result/0/id"}, {[]string{"a/b", "c~d"}, "/a~1b/c~0d"}} {
		if got := jsonPointer(tt.tokens); got != tt.want {
			t.Errorf("jsonPointer(%q) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
}
