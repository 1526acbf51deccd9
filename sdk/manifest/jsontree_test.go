package manifest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceJSONTree is the tree DecodeJSON made before its fast path, and
// still makes when parseJSONTree gives up: encoding/json with UseNumber,
// nothing but whitespace after the value, then normalizeJSON.
func referenceJSONTree(data []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return normalizeJSON(v), true
}

// treeDepth is how deeply arrays and tables nest in a tree.
func treeDepth(v any) int {
	d := 0
	switch v := v.(type) {
	case map[string]any:
		for _, e := range v {
			d = max(d, treeDepth(e))
		}
		return d + 1
	case []any:
		for _, e := range v {
			d = max(d, treeDepth(e))
		}
		return d + 1
	}
	return 0
}

// checkSameAsStd: DecodeJSON gives what its encoding/json path gives: the
// same manifest, or the same problems.
func checkSameAsStd(t *testing.T, data []byte) {
	t.Helper()
	m, err := DecodeJSON(data)
	wm, werr := decodeJSONStd(data)
	if !reflect.DeepEqual(m, wm) {
		t.Fatalf("DecodeJSON(%q) = %#v, encoding/json path %#v", data, m, wm)
	}
	if (err == nil) != (werr == nil) || err != nil && (err.Error() != werr.Error() || !reflect.DeepEqual(err, werr)) {
		t.Fatalf("DecodeJSON(%q) error %v, encoding/json path %v", data, err, werr)
	}
}

func TestParseJSONTree(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	deepObj := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	tests := []struct {
		name string
		in   string
		want any
	}{
		{"wire manifest", `{"name":"crate-0001","skills":[{"source":{"path":"skills"}}]}`,
			map[string]any{"name": "crate-0001", "skills": []any{map[string]any{"source": map[string]any{"path": "skills"}}}}},
		{"whitespace everywhere", " \t\r\n{ \"a\" :\n[ 1 , true,false ] ,\"b\":{ } } \n\t",
			map[string]any{"a": []any{int64(1), true, false}, "b": map[string]any{}}},
		{"empty containers are not nil", `{"a":[],"b":{}}`, map[string]any{"a": []any{}, "b": map[string]any{}}},
		{"escapes", `{"s":"\"\\\/\b\f\n\r\t\u00e9\u20AC\ud83d\uDE00\u0000x"}`,
			map[string]any{"s": "\"\\/\b\f\n\r\t\u00e9\u20ac\U0001F600\x00x"}},
		{"escaped name is the same name", `{"\u0061":1,"a":2}`, map[string]any{"a": int64(2)}},
		{"raw UTF-8, U+FFFD itself, U+2028", "{\"s\":\"é😀\uFFFD\u2028\x7f\"}", map[string]any{"s": "é😀\uFFFD\u2028\x7f"}},
		{"numbers", `[0,-0,1.0,-0.0,1e400,-1e400,1e-400,9223372036854775807,9223372036854775808,-9223372036854775808,-9223372036854775809,1E+2,2.5e-3,12345678901234567890]`,
			[]any{int64(0), int64(0), 1.0, math.Copysign(0, -1), "1e400", "-1e400", 0.0, int64(math.MaxInt64), 9223372036854775808.0,
				int64(math.MinInt64), -9223372036854775809.0, 100.0, 0.0025, 12345678901234567890.0}},
		{"duplicate names: the last wins", `{"a":1,"a":"x"}`, map[string]any{"a": "x"}},
		{"duplicate names: a later null removes", `{"a":1,"a":null}`, map[string]any{}},
		{"duplicate names: a later value after null", `{"a":null,"a":1}`, map[string]any{"a": int64(1)}},
		{"duplicate names: tables are not merged", `{"a":{"x":1},"a":{"y":2}}`, map[string]any{"a": map[string]any{"y": int64(2)}}},
		{"null members dropped, nulls in arrays kept", `{"x":null,"y":[null,{"z":null}]}`,
			map[string]any{"y": []any{nil, map[string]any{}}}},
		{"top-level null", `null`, nil},
		{"top-level string", ` "s" `, "s"},
		{"top-level number", `-12`, int64(-12)},
		{"nesting at the bound", deep(jsonTreeMaxDepth), nil},
		{"object nesting at the bound", deepObj(jsonTreeMaxDepth), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := parseJSONTree([]byte(tc.in))
			if !ok {
				t.Fatalf("parseJSONTree(%q) gave up", tc.in)
			}
			want, wok := referenceJSONTree([]byte(tc.in))
			if !wok {
				t.Fatalf("encoding/json rejects %q", tc.in)
			}
			if tc.want != nil && !reflect.DeepEqual(tc.want, want) {
				t.Fatalf("the table's tree %#v is not encoding/json's %#v", tc.want, want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("parseJSONTree(%q) = %#v, want %#v", tc.in, got, want)
			}
			checkSameAsStd(t, []byte(tc.in))
		})
	}
}

// Whatever the fast parser gives up on, DecodeJSON decodes with
// encoding/json: its errors, and its U+FFFD for bad UTF-8 and stray
// surrogates, are unchanged.
func TestParseJSONTreeGivesUp(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	tests := []struct {
		name string
		in   string
		// stdOK: encoding/json accepts it (the fast path leaves it the
		// replacements or the depth).
		stdOK bool
	}{
		{"empty", ``, false},
		{"only whitespace", " \n\t", false},
		{"byte order mark", "\uFEFF{}", false},
		{"trailing garbage", `{}x`, false},
		{"two values", `{} {}`, false},
		{"extra brace", `{}}`, false},
		{"trailing NUL", "{}\x00", false},
		{"comment", `{} // c`, false},
		{"trailing comma in object", `{"a":1,}`, false},
		{"trailing comma in array", `[1,]`, false},
		{"missing comma", `[1 2]`, false},
		{"missing colon", `{"a" 1}`, false},
		{"unquoted name", `{a:1}`, false},
		{"single quotes", `{'a':1}`, false},
		{"number as name", `{1:1}`, false},
		{"leading zero", `[01]`, false},
		{"lone minus", `[-]`, false},
		{"plus sign", `[+1]`, false},
		{"no digit after point", `[1.]`, false},
		{"no digit before point", `[.5]`, false},
		{"no exponent digits", `[1e+]`, false},
		{"NaN", `[NaN]`, false},
		{"Infinity", `[-Infinity]`, false},
		{"short literal", `[tru]`, false},
		{"long literal", `[nullx]`, false},
		{"capital literal", `[True]`, false},
		{"unterminated string", `{"a":"x`, false},
		{"unterminated object", `{"a":1`, false},
		{"unterminated array", `[1`, false},
		{"name without value", `{"a":}`, false},
		{"raw tab in string", "[\"\t\"]", false},
		{"raw newline in name", "{\"a\n\":1}", false},
		{"unknown escape", `["\x41"]`, false},
		{"short \\u escape", `["\u12"]`, false},
		{"bad hex digit", `["\u12G4"]`, false},
		{"backslash at the end", `["\`, false},
		{"invalid UTF-8 outside strings", "[1,\xff]", false},
		{"invalid UTF-8 in a string", "{\"name\":\"a\xffb\"}", true},
		{"invalid UTF-8 in a name", "{\"a\xc3\":1}", true},
		{"truncated UTF-8 at the end of a string", "[\"\xe2\x82\"]", true},
		{"UTF-8 of a surrogate", "[\"\xed\xa0\x80\"]", true},
		{"overlong UTF-8", "[\"\xc0\xaf\"]", true},
		{"invalid UTF-8 after an escape", "[\"\\n\xff\"]", true},
		{"lone high surrogate", `{"name":"\ud800"}`, true},
		{"lone low surrogate", `["\udc00"]`, true},
		{"high surrogate then a letter escape", `["\ud800\u0041"]`, true},
		{"high surrogate then text", `["\ud800x"]`, true},
		{"high surrogate then another escape", `["\ud800\n"]`, true},
		{"two high surrogates", `["\ud800\ud800"]`, true},
		{"pair in the wrong order", `["\udc00\ud800"]`, true},
		{"too deep", deep(jsonTreeMaxDepth + 1), true},
		{"too deep in an object", `{"a":` + deep(jsonTreeMaxDepth) + `}`, true},
		{"deeper than encoding/json allows", deep(10001), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if v, ok := parseJSONTree([]byte(tc.in)); ok {
				t.Fatalf("parseJSONTree(%q) = %#v, want it to give up", tc.in, v)
			}
			if _, ok := referenceJSONTree([]byte(tc.in)); ok != tc.stdOK {
				t.Fatalf("encoding/json accepts %q: %v, the table says %v", tc.in, ok, tc.stdOK)
			}
			checkSameAsStd(t, []byte(tc.in))
		})
	}
}

// A name with bad UTF-8 or a stray surrogate decodes as encoding/json
// decodes it, with U+FFFD: the fast path does not take it on.
func TestDecodeJSONReplacementChars(t *testing.T) {
	for in, want := range map[string]string{
		"{\"name\":\"a\xffb\"}":    "a\uFFFDb",
		`{"name":"a\ud800b"}`:      "a\uFFFDb",
		`{"name":"a\udc00\ud800"}`: "a\uFFFD\uFFFD",
	} {
		m, err := DecodeJSON([]byte(in))
		if err != nil {
			t.Fatalf("DecodeJSON(%q): %v", in, err)
		}
		if m.Name != want {
			t.Errorf("DecodeJSON(%q).Name = %q, want %q", in, m.Name, want)
		}
	}
}

// jsonTreeSeeds is tricky JSON for FuzzJSONTree, beside the manifests.
var jsonTreeSeeds = []string{
	`{"name":"crate-0001","skills":[{"source":{"path":"skills"}}]}`,
	`{"s":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}`,
	`{"s":"\ud800","t":"\udc00\ud800","u":"\ud800\u0041"}`,
	"{\"s\":\"a\xffb\xed\xa0\x80\"}",
	`[0,-0,1.0,-0.0,1e400,-1e400,1e-400,9223372036854775808,-9223372036854775809,1E+2]`,
	`{"a":1,"a":null,"b":null,"b":2,"c":{"x":1},"c":{"y":[null]}}`,
	"\uFEFF{}",
	`{} x`,
	`{"a":[1,]}`,
	strings.Repeat(`{"a":[`, 300) + strings.Repeat("]}", 300),
	` null `,
}

func FuzzJSONTree(f *testing.F) {
	for _, s := range jsonTreeSeeds {
		f.Add([]byte(s))
	}
	wires, err := filepath.Glob("testdata/golden/*.wire.json")
	if err != nil {
		f.Fatal(err)
	}
	for _, p := range append(wires, "testdata/gizmo-wire.json") {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	// A \u escape of a UTF-16 surrogate (it may follow an escaped
	// backslash: a false alarm only weakens the check).
	surrogateEscape := regexp.MustCompile(`\\u[dD][89abcdefABCDEF]`)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, ok := parseJSONTree(data)
		want, wok := referenceJSONTree(data)
		switch {
		case ok && !wok:
			t.Fatalf("parseJSONTree(%q) = %#v, encoding/json rejects it", data, got)
		case ok && !reflect.DeepEqual(got, want):
			t.Fatalf("parseJSONTree(%q) = %#v, encoding/json %#v", data, got, want)
		case !ok && wok && utf8.Valid(data) && !surrogateEscape.Match(data) && treeDepth(want) <= jsonTreeMaxDepth:
			t.Fatalf("parseJSONTree(%q) gave up on JSON it takes on", data)
		}
		checkSameAsStd(t, data)
	})
}
