package pmserver

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAdmit: whatever a line holds, admission never panics, answers only
// with valid UTF-8 JSON, and forwards only requests jrpc2 accepts whole.
func FuzzAdmit(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"list_deps"}`,
		`{"jsonrpc":"1.0","id":2,"method":"list_deps"}`,
		`{"jsonrpc":"2.0","id":80,"method":5}`,
		`[{"jsonrpc":"2.0","id":1,"method":"initialize"},{"jsonrpc":"2.0","method":"x"}]`,
		"{\"id\":\"\xff\"}",
		`[]`, `7`, `{"jsonrpc":"2.0","method":"x","params":3}`, `not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		v := admit(line)
		switch {
		case v.answer != nil:
			if !utf8.Valid(v.answer) || !json.Valid(v.answer) {
				t.Fatalf("answer %q is not valid UTF-8 JSON", v.answer)
			}
		case v.forward:
			var m map[string]json.RawMessage
			if json.Unmarshal(line, &m) != nil || len(v.id) == 0 || v.method == "" {
				t.Fatalf("forwarded %q with id %q method %q", line, v.id, v.method)
			}
		case v.note == "":
			t.Fatalf("%q: neither answered, forwarded nor noted", line)
		}
	})
}
