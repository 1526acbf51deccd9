package jsonscan

import (
	"encoding/json"
	"maps"
	"slices"
	"testing"
)

// members collects what Members reports, keeping the last of a repeated
// name as a map does.
func members(raw []byte) (map[string]string, bool) {
	got := map[string]string{}
	ok := Members(raw, func(name string, value json.RawMessage) { got[name] = string(value) })
	return got, ok
}

// TestMembers: the members of valid JSON objects, as written, and false for
// every other valid JSON value.
func TestMembers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string // nil: not an object
	}{
		{`{}`, map[string]string{}},
		{` { } `, map[string]string{}},
		{`{"jsonrpc":"2.0","id":1,"result":{"offers":[{"root":"/a\"}"}]}}`, map[string]string{"jsonrpc": `"2.0"`, "id": "1", "result": `{"offers":[{"root":"/a\"}"}]}`}},
		{"{ \"a\" :\t[1, [2], {\"b\":null}] ,\n\"c\":-1.5e3 }", map[string]string{"a": `[1, [2], {"b":null}]`, "c": "-1.5e3"}},
		{`{"a":1,"a":2}`, map[string]string{"a": "2"}},
		{`{"\u0069d":true,"m\"x":false}`, map[string]string{"id": "true", `m"x`: "false"}},
		{`{"s":"}]{["}`, map[string]string{"s": `"}]{["`}},
		{`[1,2]`, nil},
		{`"{}"`, nil},
		{`null`, nil},
		{`12`, nil},
	} {
		got, ok := members([]byte(tc.in))
		if ok != (tc.want != nil) || (ok && !maps.Equal(got, tc.want)) {
			t.Errorf("Members(%s) = %v, %v; want %v", tc.in, got, ok, tc.want)
		}
	}
}

// FuzzMembers holds Members to encoding/json on valid JSON: an object's
// members are those decoding into map[string]json.RawMessage gives, and
// nothing else is an object.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{"a":{"b":[1,"]"]},"c":"\\\""}`, `[{}]`, `"x"`, `{"a":1,"a":{}}`, `{"\ud800":1}`, "{\"\xff\":2}"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // Members is only defined on valid JSON
		}
		got, ok := members(raw)
		var want map[string]json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil || want == nil {
			if ok {
				t.Fatalf("Members(%q) reports an object; encoding/json: %v", raw, err)
			}
			return
		}
		if !ok {
			t.Fatalf("Members(%q) reports no object; encoding/json decodes %v", raw, want)
		}
		if len(got) != len(want) {
			t.Fatalf("Members(%q) = %v; encoding/json %v", raw, got, want)
		}
		for k, v := range want {
			if g, in := got[k]; !in || g != string(v) {
				t.Fatalf("Members(%q)[%q] = %q (%v); encoding/json %q", raw, k, g, in, v)
			}
		}
	})
}

// FuzzDecodeString holds DecodeString to json.Unmarshal into a string,
// whether or not its fast path takes the input.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"^1.2.3"`, `"npm:@s/e@~2"`, `"a\"b"`, `"\u00e9"`, `"é"`, "\"\xff\"", "\"a\tb\"", `""`, `"`, `1`, `"a"b"`, `null`, ` "x" `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := DecodeString(raw)
		var want string
		err := json.Unmarshal(raw, &want)
		if ok != (err == nil) || got != want {
			t.Fatalf("DecodeString(%q) = %q, %v; json.Unmarshal gives %q, %v", raw, got, ok, want, err)
		}
	})
}

// TestDecodeString: the specs of a package.json and the names of a
// request decode as written; escapes, control characters and invalid
// UTF-8 as encoding/json decodes them; anything but a string (or null)
// is refused.
func TestDecodeString(t *testing.T) {
	for in, want := range map[string]struct {
		s  string
		ok bool
	}{
		`"^1.2.3"`: {"^1.2.3", true}, `"npm:@s/e@~2"`: {"npm:@s/e@~2", true}, `"é"`: {"é", true}, `""`: {"", true},
		`"a\"b"`: {`a"b`, true}, `"\u00e9"`: {"é", true}, "\"\xff\"": {"\uFFFD", true}, ` "x" `: {"x", true}, `null`: {"", true},
		"\"a\tb\"": {"", false}, `"`: {"", false}, `1`: {"", false}, `"a"b"`: {"", false}, `{}`: {"", false},
	} {
		if s, ok := DecodeString([]byte(in)); s != want.s || ok != want.ok {
			t.Errorf("DecodeString(%s) = %q, %v; want %q, %v", in, s, ok, want.s, want.ok)
		}
	}
}

// TestPlainString: a string written as it decodes is handed over in
// place; one with an escape, a control character, invalid UTF-8 or space
// around it, and anything but a string, is not plain.
func TestPlainString(t *testing.T) {
	for in, want := range map[string]bool{
		`"^1.2.3"`: true, `"é"`: true, `""`: true, `"skills/a b"`: true,
		`"a\"b"`: false, `"\u00e9"`: false, "\"\xff\"": false, "\"a\tb\"": false, ` "x" `: false,
		`"a"b"`: false, `"`: false, `null`: false, `1`: false, `{}`: false,
	} {
		raw := []byte(in)
		body, ok := PlainString(raw)
		if ok != want {
			t.Errorf("PlainString(%s) ok = %v, want %v", in, ok, want)
			continue
		}
		if ok && string(body) != in[1:len(in)-1] {
			t.Errorf("PlainString(%s) = %q, not the text between the quotes", in, body)
		}
		if ok && len(body) > 0 && &body[0] != &raw[1] {
			t.Errorf("PlainString(%s) returned a copy, not a slice of its input", in)
		}
	}
}

// FuzzPlainString holds PlainString to json.Unmarshal: what it calls
// plain decodes without error to exactly the body it returns.
func FuzzPlainString(f *testing.F) {
	for _, s := range []string{`"^1.2.3"`, `"é"`, `""`, `"a\"b"`, "\"\xff\"", "\"\x7f\"", `"a"b"`, `"\/"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		body, ok := PlainString(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || string(body) != want {
			t.Fatalf("PlainString(%q) = %q; json.Unmarshal gives %q, %v", raw, body, want, err)
		}
	})
}

// elements collects what Elements reports.
func elements(raw []byte) ([]string, bool) {
	got := []string{}
	ok := Elements(raw, func(value json.RawMessage) bool { got = append(got, string(value)); return true })
	return got, ok
}

// TestElements: the elements of valid JSON arrays, as written, false for
// every other valid JSON value, and false when the callback stops.
func TestElements(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string // nil: not an array
	}{
		{`[]`, []string{}},
		{" [ \n] ", []string{}},
		{`[1, "a]", {"b":[2]} ,null,[[]]]`, []string{"1", `"a]"`, `{"b":[2]}`, "null", "[[]]"}},
		{"[\t-1.5e3\r]", []string{"-1.5e3"}},
		{`{"a":[1]}`, nil},
		{`"[]"`, nil},
		{`null`, nil},
	} {
		got, ok := elements([]byte(tc.in))
		if ok != (tc.want != nil) || (ok && !slices.Equal(got, tc.want)) {
			t.Errorf("Elements(%s) = %q, %v; want %q", tc.in, got, ok, tc.want)
		}
	}
	n := 0
	if Elements([]byte(`[1,2,3]`), func(json.RawMessage) bool { n++; return n < 2 }) || n != 2 {
		t.Errorf("Elements went on after its callback stopped it (%d calls), or reported an array", n)
	}
}

// FuzzElements holds Elements to encoding/json on valid JSON: an array's
// elements are those decoding into []json.RawMessage gives, and nothing
// else is an array.
func FuzzElements(f *testing.F) {
	for _, s := range []string{`[]`, `[1]`, `[{"a":"]"},[1,[2]],"\\\""]`, `{"a":[1]}`, `"x"`, `[null,true]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return // Elements is only defined on valid JSON
		}
		got, ok := elements(raw)
		var want []json.RawMessage
		if err := json.Unmarshal(raw, &want); err != nil || want == nil {
			if ok {
				t.Fatalf("Elements(%q) reports an array; encoding/json: %v", raw, err)
			}
			return
		}
		if !ok || len(got) != len(want) {
			t.Fatalf("Elements(%q) = %q, %v; encoding/json %q", raw, got, ok, want)
		}
		for i := range want {
			if got[i] != string(want[i]) {
				t.Fatalf("Elements(%q)[%d] = %q; encoding/json %q", raw, i, got[i], want[i])
			}
		}
	})
}

// TestRawMembers: names come as written, quotes and escapes included.
func TestRawMembers(t *testing.T) {
	var names []string
	ok := RawMembers([]byte(`{"id":1, "\u0069d" :2,"a\"b":3}`), func(name []byte, _ json.RawMessage) { names = append(names, string(name)) })
	if want := []string{`"id"`, `"\u0069d"`, `"a\"b"`}; !ok || !slices.Equal(names, want) {
		t.Errorf("RawMembers gave names %q, %v; want %q", names, ok, want)
	}
}

// FuzzAppendString holds AppendString to json.Marshal, for strings and
// byte slices, after whatever is already in the buffer.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "serde", `a"b\c`, "a<b>&c", "\u2028", "\xff", "tab\there", "é", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s; json.Marshal gives %s", s, got[1:], want)
		}
		if got := AppendString(nil, []byte(s)); string(got) != string(want) {
			t.Fatalf("AppendString([]byte(%q)) = %s; json.Marshal gives %s", s, got, want)
		}
	})
}
