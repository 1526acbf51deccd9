package packagejson

import (
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
)

// strMapStd is strMap as encoding/json gives it: the object decoded into a
// map of raw values (the last of a repeated name kept), then its string
// values (a null as "") under names other than "".
func strMapStd(r json.RawMessage) map[string]string {
	var obj map[string]json.RawMessage
	if len(r) == 0 || json.Unmarshal(r, &obj) != nil {
		return nil
	}
	out := map[string]string{}
	for k, v := range obj {
		if s, ok := jsonscan.DecodeString(v); ok && k != "" {
			out[k] = s
		}
	}
	return out
}

func TestStrMap(t *testing.T) {
	for _, in := range []string{
		`{"a":"^1","b":"~2"}`,
		`{"a":"^1","a":2}`,
		`{"a":2,"a":"^1"}`,
		`{"a":"^1","a":null}`,
		`{"":"x","\u0062":"y\n","c":{"d":"e"},"f":["g"],"h":true}`,
		"{\"a\xff\":\"b\xfe\"}",
		`{}`,
	} {
		got, want := strMap(json.RawMessage(in)), strMapStd(json.RawMessage(in))
		if !maps.Equal(got, want) || got == nil {
			t.Errorf("strMap(%s) = %q, encoding/json gives %q", in, got, want)
		}
	}
	// Not an object: no dependencies either way.
	for _, in := range []string{``, `null`, `"x"`, `["a"]`, `3`} {
		if got, want := strMap(json.RawMessage(in)), strMapStd(json.RawMessage(in)); len(got) != 0 || len(want) != 0 {
			t.Errorf("strMap(%s) = %q, encoding/json gives %q", in, got, want)
		}
	}
}

func FuzzStrMap(f *testing.F) {
	f.Add([]byte(`{"a":"^1","a":null,"b":2,"\u0063":"x"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // strMap is handed members of a document already checked
		}
		got, want := strMap(data), strMapStd(data)
		if !maps.Equal(got, want) {
			t.Fatalf("strMap(%q) = %q, encoding/json gives %q", data, got, want)
		}
	})
}

// BenchmarkParseManyDeps: a workspace's root package.json declaring 1,000
// dependencies, which list_deps and workspace both read.
func BenchmarkParseManyDeps(b *testing.B) {
	data := []byte(`{"name":"app","version":"1.0.0","dependencies":{`)
	for i := range 1000 {
		if i > 0 {
			data = append(data, ',')
		}
		data = fmt.Appendf(data, `"pkg-%04d":"^1.%d.0"`, i, i%9)
	}
	data = append(data, "}}"...)
	b.ReportAllocs()
	for b.Loop() {
		if m, err := Parse(data); err != nil || len(m.Deps) != 1000 {
			b.Fatal(m, err)
		}
	}
}
