package manifest

import (
	"reflect"
	"testing"
)

// treeDecode is what DecodeJSON gives without decodePlain: parseJSONTree
// and d.manifest, or encoding/json when the tree parser gives up.
func treeDecode(data []byte) (*Manifest, error) {
	if tree, ok := parseJSONTree(data); ok {
		if t, ok := tree.(map[string]any); ok {
			return decodeTree(t)
		}
	}
	return decodeJSONStd(data)
}

// checkPlainAgrees fails when decodePlain takes data and decodes it to
// anything but what the tree path gives, and reports whether it took it.
func checkPlainAgrees(t *testing.T, data []byte) bool {
	t.Helper()
	got, ok := decodePlain(data)
	if !ok {
		return false
	}
	want, err := treeDecode(data)
	if err != nil {
		t.Fatalf("decodePlain(%q) = %#v, the tree path fails: %v", data, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decodePlain(%q) = %#v, the tree path %#v", data, got, want)
	}
	return true
}

func TestDecodePlain(t *testing.T) {
	tests := []struct {
		in    string
		plain bool // decodePlain takes it
	}{
		{`{"name":"crate-0001","skills":[{"source":{"path":"skills"}}]}`, true},
		{` {"skills" : [ {"source":{"git":"https://github.com/o/r"}} , {"source":{"path":"a","git":"b"}} ] , "name":"é😀"} `, true},
		{`{}`, true},
		{`{"name":""}`, true},
		{`{"skills":[]}`, true},
		{`{"skills":[{}]}`, true},
		{`{"skills":[{"source":{}}]}`, true},

		// Left to the tree path.
		{`{"name":null}`, false},                                         // null is absent there
		{`{"name":"a","name":"b"}`, false},                               // the last wins there
		{`{"name":"a\"b"}`, false},                                       // an escape
		{`{"n\u0061me":"a"}`, false},                                     // an escaped name
		{`{"name":"a","version":"1"}`, false},                            // another member
		{`{"name":1}`, false},                                            // a problem, worded there
		{`{"skills":{}}`, false},                                         // a problem, worded there
		{`{"skills":[1]}`, false},                                        // a problem, worded there
		{`{"skills":[{"source":"crate"}]}`, false},                       // the retired scalar
		{`{"skills":[{"source":{"path":"s","crate":"x"}}]}`, false},      // an extra
		{`{"skills":[{"source":{"path":"s"},"depends-on":"x"}]}`, false}, // a gate
		{`{"skills":[{"source":{"path":"s"},"source":{"path":"t"}}]}`, false},
		{`{"skills":[{"source":{"path":"s","path":"t"}}]}`, false},
		{"{\"name\":\"a\xffb\"}", false}, // invalid UTF-8: U+FFFD there
		{"{\"name\":\"a\tb\"}", false},   // invalid JSON
		{`{"name":"a"} x`, false},
		{`["name"]`, false},
		{``, false},
	}
	for _, tc := range tests {
		if got := checkPlainAgrees(t, []byte(tc.in)); got != tc.plain {
			t.Errorf("decodePlain(%q) took it: %v, want %v", tc.in, got, tc.plain)
		}
		// DecodeJSON gives what the tree path gives, whichever path it took.
		got, err := DecodeJSON([]byte(tc.in))
		want, werr := treeDecode([]byte(tc.in))
		if !reflect.DeepEqual(got, want) || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
			t.Errorf("DecodeJSON(%q) = %#v, %v; the tree path %#v, %v", tc.in, got, err, want, werr)
		}
	}
}

// The strings decodePlain returns are slices of its own copy of the
// document, not of the caller's bytes, which the caller may reuse.
func TestDecodePlainCopies(t *testing.T) {
	data := []byte(`{"name":"abc","skills":[{"source":{"path":"def"}}]}`)
	m, ok := decodePlain(data)
	if !ok {
		t.Fatal("decodePlain gave up")
	}
	for i := range data {
		data[i] = 'x'
	}
	if m.Name != "abc" || m.Skills[0].Source.Path != "def" {
		t.Fatalf("the manifest changed with the document: %#v", m)
	}
}

func FuzzDecodePlain(f *testing.F) {
	for _, s := range []string{
		`{"name":"crate-0001","skills":[{"source":{"path":"skills"}}]}`,
		`{"skills":[{"source":{"git":"g","path":"p"}},{}],"name":"n"}`,
		`{"name":"a","name":"b"}`,
		`{"skills":[{"source":{"path":null}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPlainAgrees(t, data)
	})
}
