package protocol_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/symposium-dev/symposium-pm/sdk/internal/schemacases"
	"github.com/symposium-dev/symposium-pm/sdk/manifest"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// schemaDoc is the schema decoded as generic JSON.
type schemaDoc struct {
	Defs map[string]map[string]any `json:"$defs"`
}

func loadSchema(t *testing.T) schemaDoc {
	t.Helper()
	var doc schemaDoc
	if err := json.Unmarshal(protocol.SchemaJSON(), &doc); err != nil {
		t.Fatalf("the embedded schema is not JSON: %v", err)
	}
	return doc
}

// TestSchemaIdenticalToDocs keeps the embedded copy and the repository's
// docs/protocol.schema.json identical.
func TestSchemaIdenticalToDocs(t *testing.T) {
	docs := filepath.Join("..", "..", "docs", "protocol.schema.json")
	want, err := os.ReadFile(docs)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skipf("%s not found: not in a checkout of the repository", docs)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(protocol.SchemaJSON(), want) {
		t.Errorf("sdk/protocol/protocol.schema.json differs from docs/protocol.schema.json; edit docs/protocol.schema.json, then: cp docs/protocol.schema.json sdk/protocol/")
	}
}

func compile(t *testing.T) *jsonschema.Compiler {
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
	return c
}

func TestSchemaCompiles(t *testing.T) {
	c := compile(t)
	if _, err := c.Compile(protocol.SchemaID); err != nil {
		t.Fatalf("the schema does not compile: %v", err)
	}
	for name := range loadSchema(t).Defs {
		if _, err := c.Compile(protocol.SchemaID + "#/$defs/" + name); err != nil {
			t.Errorf("$defs/%s does not compile: %v", name, err)
		}
	}
}

// wireTypes are the Go types whose JSON form the schema describes under
// $defs named after them.
var wireTypes = []any{
	protocol.PackageID{}, protocol.Offer{}, protocol.SearchHit{},
	protocol.InitializeParams{}, protocol.InitializeResult{},
	protocol.ActivePluginsParams{}, protocol.LoadPluginParams{}, protocol.SearchParams{},
	protocol.FetchParams{}, protocol.FetchResult{}, protocol.RefreshParams{}, protocol.RefreshResult{},
	protocol.WorkspaceMember{}, protocol.WorkspaceResult{},
	protocol.Error{}, protocol.IDData{}, protocol.RegistryData{}, protocol.IntegrityData{}, protocol.ContentData{},
	protocol.Diagnostic{},
}

// TestSchemaCoversWireTypes fails when a wire type has a field the schema
// lacks, or the schema names a property the type lacks; it also compares
// each property's JSON type, and required with omitempty.
func TestSchemaCoversWireTypes(t *testing.T) {
	doc := loadSchema(t)
	for _, v := range wireTypes {
		typ := reflect.TypeOf(v)
		for _, p := range compareStruct(doc, typ) {
			t.Errorf("protocol.%s vs $defs/%s: %s", typ.Name(), typ.Name(), p)
		}
	}
}

// compareStruct returns the differences between a struct type's JSON fields
// and the schema definition named after it.
func compareStruct(doc schemaDoc, typ reflect.Type) []string {
	def, ok := doc.Defs[typ.Name()]
	if !ok {
		return []string{"the schema has no definition"}
	}
	var problems []string
	if def["additionalProperties"] != false {
		problems = append(problems, `the definition does not forbid other properties ("additionalProperties": false)`)
	}
	props, _ := def["properties"].(map[string]any)
	var required []string
	for _, r := range asSlice(def["required"]) {
		required = append(required, fmt.Sprint(r))
	}
	seen := map[string]bool{}
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		seen[name] = true
		ps, ok := props[name].(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("field %s (%q) is not in the schema's properties", f.Name, name))
			continue
		}
		omit := slices.Contains(strings.Split(opts, ","), "omitempty")
		if req := slices.Contains(required, name); req == omit {
			problems = append(problems, fmt.Sprintf("property %q: required is %v, but the field's omitempty is %v", name, req, omit))
		}
		if p := compareType(doc, f.Type, ps); p != "" {
			problems = append(problems, fmt.Sprintf("property %q: %s", name, p))
		}
	}
	for name := range props {
		if !seen[name] {
			problems = append(problems, fmt.Sprintf("the schema names property %q, which the Go type lacks", name))
		}
	}
	for _, r := range required {
		if !seen[r] {
			problems = append(problems, fmt.Sprintf("the schema requires %q, which the Go type lacks", r))
		}
	}
	sort.Strings(problems)
	return problems
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// compareType checks that the property schema ps describes Go type typ.
func compareType(doc schemaDoc, typ reflect.Type, ps map[string]any) string {
	if typ == rawMessage {
		return "" // any JSON value, or a constrained object: not a Go-typed field
	}
	if typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if r, ok := ps["$ref"].(string); ok {
		name := strings.TrimPrefix(r, "#/$defs/")
		if typ.Kind() == reflect.Struct {
			if name != typ.Name() {
				return fmt.Sprintf("refers to %s, but the field is a %s", name, typ.Name())
			}
			return ""
		}
		ps = doc.Defs[name]
	}
	want := map[reflect.Kind]string{
		reflect.String: "string", reflect.Bool: "boolean", reflect.Int: "integer", reflect.Int64: "integer",
		reflect.Slice: "array", reflect.Map: "object", reflect.Struct: "object",
	}[typ.Kind()]
	if got := ps["type"]; got != want {
		return fmt.Sprintf("the schema says type %v, the Go field is %s (%s)", got, want, typ)
	}
	switch typ.Kind() {
	case reflect.Slice:
		items, _ := ps["items"].(map[string]any)
		if p := compareType(doc, typ.Elem(), items); p != "" {
			return "items: " + p
		}
	case reflect.Map:
		vals, _ := ps["additionalProperties"].(map[string]any)
		if p := compareType(doc, typ.Elem(), vals); p != "" {
			return "values: " + p
		}
	}
	return ""
}

func asSlice(v any) []any {
	s, _ := v.([]any)
	return s
}

// TestSchemaMessages checks that each method has a request and a response
// definition whose params and result refer to the method's types.
func TestSchemaMessages(t *testing.T) {
	doc := loadSchema(t)
	for _, m := range protocol.Methods {
		camel := camelCase(m)
		for _, kind := range []string{"Request", "Response"} {
			def, ok := doc.Defs[camel+kind]
			if !ok {
				t.Errorf("method %s: no $defs/%s%s", m, camel, kind)
				continue
			}
			props, _ := def["properties"].(map[string]any)
			field, want := "params", camel+"Params"
			if kind == "Response" {
				field, want = "result", camel+"Result"
			} else if method, _ := props["method"].(map[string]any); method["const"] != m {
				t.Errorf("$defs/%sRequest: method is %v, want the constant %q", camel, props["method"], m)
			}
			p, _ := props[field].(map[string]any)
			if p["$ref"] != "#/$defs/"+want {
				t.Errorf("$defs/%s%s: %s is %v, want a reference to #/$defs/%s", camel, kind, field, p, want)
			}
			if _, ok := doc.Defs[want]; !ok {
				t.Errorf("no $defs/%s", want)
			}
		}
	}
}

func camelCase(method string) string {
	var b strings.Builder
	for _, part := range strings.Split(method, "_") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// TestSchemaCoversManifest fills every field of a manifest (but the unknown
// keys), encodes its wire form, and compares the keys at every level with
// the properties of the schema's manifest definitions, both ways: a key the
// Go encoder writes that the schema lacks, or a property the schema names
// that no Go field writes, fails. The filled manifest must also validate.
func TestSchemaCoversManifest(t *testing.T) {
	doc := loadSchema(t)
	var m manifest.Manifest
	fill(reflect.ValueOf(&m).Elem(), 0)
	wire, err := m.WireJSON()
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(wire, &tree); err != nil {
		t.Fatal(err)
	}
	var problems []string
	walkManifest(doc, "#/$defs/Manifest", tree, "", &problems)
	for _, p := range problems {
		t.Error(p)
	}
	sch, err := compile(t).Compile(protocol.SchemaID + "#/$defs/Manifest")
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(wire))
	if err := sch.Validate(inst); err != nil {
		t.Errorf("a manifest with every field set does not validate: %v\n%s", err, wire)
	}
}

// fill sets every exported field of v, recursively, to a non-zero value,
// leaving the maps of unknown keys (Extra) empty. Recursion through
// pointers to structs stops at a small depth.
func fill(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Interface:
		v.Set(reflect.ValueOf("x"))
	case reflect.Pointer:
		if depth > 3 && v.Type().Elem().Kind() == reflect.Struct {
			return // a recursive type: an inline installation's requirements
		}
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), depth+1)
		v.Set(p)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(s.Index(0), depth+1)
		v.Set(s)
	case reflect.Map:
		mv := reflect.MakeMap(v.Type())
		e := reflect.New(v.Type().Elem()).Elem()
		fill(e, depth+1)
		mv.SetMapIndex(reflect.ValueOf("x"), e)
		v.Set(mv)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if !f.IsExported() || f.Name == "Extra" {
				continue
			}
			fill(v.Field(i), depth)
		}
	}
}

// walkManifest compares the object keys of instance v with the schema at
// ref, recursively.
func walkManifest(doc schemaDoc, ref string, v any, at string, problems *[]string) {
	s := resolve(doc, ref, v)
	if s == nil {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		props, ok := s["properties"].(map[string]any)
		if !ok {
			if vals, ok := s["additionalProperties"].(map[string]any); ok {
				for k, e := range v {
					walkManifest(doc, refOf(vals), e, at+"/"+k, problems)
				}
			}
			return
		}
		name := strings.TrimPrefix(ref, "#/$defs/")
		for k, e := range v {
			ps, ok := props[k].(map[string]any)
			if !ok {
				*problems = append(*problems, fmt.Sprintf("manifest key %s/%s is written by the Go encoder but not named in $defs/%s", at, k, name))
				continue
			}
			walkManifest(doc, refOf(ps), e, at+"/"+k, problems)
		}
		for k := range props {
			if _, ok := v[k]; !ok {
				*problems = append(*problems, fmt.Sprintf("$defs/%s names %q, which no field of the Go manifest types writes (at %s)", name, k, at))
			}
		}
	case []any:
		items, _ := s["items"].(map[string]any)
		for i, e := range v {
			walkManifest(doc, refOf(items), e, fmt.Sprintf("%s/%d", at, i), problems)
		}
	}
}

// refOf returns the reference a property schema makes, or a pseudo
// reference to the inline schema itself.
func refOf(ps map[string]any) string {
	if r, ok := ps["$ref"].(string); ok {
		return r
	}
	b, _ := json.Marshal(ps)
	return "inline:" + string(b)
}

// resolve returns the schema object ref names; for an anyOf, the branch
// describing an object when v is one.
func resolve(doc schemaDoc, ref string, v any) map[string]any {
	var s map[string]any
	if inline, ok := strings.CutPrefix(ref, "inline:"); ok {
		json.Unmarshal([]byte(inline), &s)
	} else {
		s = doc.Defs[strings.TrimPrefix(ref, "#/$defs/")]
	}
	if alts, ok := s["anyOf"].([]any); ok {
		_, isObj := v.(map[string]any)
		_, isArr := v.([]any)
		for _, a := range alts {
			am, _ := a.(map[string]any)
			if r, ok := am["$ref"].(string); ok {
				am = resolve(doc, r, v)
			}
			if (isObj && am["type"] == "object") || (isArr && am["type"] == "array") {
				return am
			}
		}
		return nil
	}
	return s
}

// TestSchemaAcceptsManifestWireForms validates the manifest package's
// golden wire forms against the manifest definition.
func TestSchemaAcceptsManifestWireForms(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "manifest", "testdata", "golden", "*.wire.json"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "manifest", "testdata", "gizmo-wire.json"))
	if len(files) < 10 {
		t.Fatalf("found only %d wire forms: %v", len(files), files)
	}
	sch, err := compile(t).Compile(protocol.SchemaID + "#/$defs/Manifest")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s does not match $defs/Manifest: %v", f, err)
		}
	}
	// A known key of the wrong type does not match.
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"name":"x","skills":[{"source":{"path":7}}]}`))
	if err := sch.Validate(inst); err == nil {
		t.Error("a skill source path given as a number matches $defs/Manifest")
	}
}

// TestSchemaAcceptsGoRequests validates the requests a host builds from
// the Go parameter types against each method's request definition.
func TestSchemaAcceptsGoRequests(t *testing.T) {
	c := compile(t)
	reqs := schemacases.GoRequests()
	for _, m := range protocol.Methods {
		b := reqs[m]
		sch, err := c.Compile(protocol.SchemaID + "#/$defs/" + camelCase(m) + "Request")
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err := sch.Validate(inst); err != nil {
			t.Errorf("%s: %v", b, err)
		}
	}
}

// TestSchemaDiagnosticNotification validates diagnostic notifications built
// from the Go type against $defs/DiagnosticNotification and the root, and
// refuses malformed ones.
func TestSchemaDiagnosticNotification(t *testing.T) {
	c := compile(t)
	note, err := c.Compile(protocol.SchemaID + "#/$defs/DiagnosticNotification")
	if err != nil {
		t.Fatal(err)
	}
	root, err := c.Compile(protocol.SchemaID)
	if err != nil {
		t.Fatal(err)
	}
	good := []protocol.Diagnostic{
		{Request: json.RawMessage(`3`), Message: "dropped"},
		{Request: json.RawMessage(`"a"`), Level: protocol.LevelInfo, Message: "m", File: "/w/package.json", Line: 2,
			Package: &protocol.PackageID{PM: "npm", Name: "x", Version: "1.0.0"}},
	}
	for _, d := range good {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": protocol.MethodDiagnostic, "params": d})
		for name, sch := range map[string]*jsonschema.Schema{"DiagnosticNotification": note, "root": root} {
			inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(b))
			if err := sch.Validate(inst); err != nil {
				t.Errorf("%s: %s: %v", name, b, err)
			}
		}
	}
	bad := []string{
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"message":"no request"}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":""}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","level":"loud"}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","line":0}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","extra":true}}`,
		`{"jsonrpc":"2.0","id":1,"method":"diagnostic","params":{"request":1,"message":"m"}}`,
	}
	for _, b := range bad {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(b))
		if err := note.Validate(inst); err == nil {
			t.Errorf("%s matches $defs/DiagnosticNotification", b)
		}
	}
}
