package jsonscan

import (
	"encoding/json"
	"testing"
)

// decodesInto reports whether encoding/json decodes the member named (as
// written) name into a struct field named "root".
func decodesInto(name string) bool {
	var v struct {
		Root *int `json:"root"`
	}
	return json.Unmarshal([]byte("{"+name+":1}"), &v) == nil && v.Root != nil
}

func TestMayBeField(t *testing.T) {
	for _, tc := range []struct {
		name string
		may  bool
	}{
		{`"root"`, true},
		{`"ROOT"`, true},
		{`"rOoT"`, true},
		{`"r\u006fot"`, true}, // an escape
		{`"roo"`, false},
		{`"roots"`, false},
		{`"manifest"`, false},
		{`""`, false},
		{`"ro\u00f6t"`, true},   // an escape, though not the field
		{"\"r\u00f6ot\"", true}, // outside ASCII, though not the field
		{"\"\u212aey\"", true},  // the Kelvin sign, which folds to k
		{`"id"`, false},
	} {
		if got := MayBeField([]byte(tc.name), "root"); got != tc.may {
			t.Errorf("MayBeField(%s, root) = %v, want %v", tc.name, got, tc.may)
		}
		if decodesInto(tc.name) && !MayBeField([]byte(tc.name), "root") {
			t.Errorf("encoding/json decodes %s into root, MayBeField says it cannot", tc.name)
		}
	}
}

// FuzzMayBeField: whatever name encoding/json decodes into the field,
// MayBeField says it may.
func FuzzMayBeField(f *testing.F) {
	for _, s := range []string{`"root"`, `"Root"`, `"\u0072oot"`, "\"ro\u017fot\"", `"x"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if !json.Valid([]byte(name)) || len(name) < 2 || name[0] != '"' {
			return
		}
		if decodesInto(name) && !MayBeField([]byte(name), "root") {
			t.Fatalf("encoding/json decodes %s into root, MayBeField says it cannot", name)
		}
	})
}
