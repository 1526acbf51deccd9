package jsonscan

import (
	"encoding/json"
	"slices"
	"testing"
)

// headNames returns the members HeadMembers hands over, as name=value.
func headNames(head string) []string {
	var out []string
	HeadMembers([]byte(head), func(name []byte, value json.RawMessage) bool {
		out = append(out, string(name)+"="+string(value))
		return true
	})
	return out
}

// TestHeadMembers: only whole members of the object's top level are
// handed over; a cut member, and anything after it, is not.
func TestHeadMembers(t *testing.T) {
	for head, want := range map[string][]string{
		`{"a":1,"b":"x"}`:                  {`"a"=1`, `"b"="x"`},
		` { "a" : [1,{"id":2}] , "id":3 }`: {`"a"=[1,{"id":2}]`, `"id"=3`},
		`{"a":{"b":"}"},"c":tr`:            {`"a"={"b":"}"}`},
		`{"a":12`:                          nil, // a number known whole only when something follows
		`{"a":"x\"y`:                       nil,
		`{"a\"b":null,"c"`:                 {`"a\"b"=null`},
		`[{"a":1}]`:                        nil,
		`{}`:                               nil,
		`{"a":1 "b":2}`:                    {`"a"=1`},
		`{"a":,}`:                          nil,
	} {
		if got := headNames(head); !slices.Equal(got, want) {
			t.Errorf("HeadMembers(%s) = %q, want %q", head, got, want)
		}
	}
}

// FuzzHeadMembers: on a whole JSON object HeadMembers hands over what
// RawMembers does, and on any prefix of it a prefix of that.
func FuzzHeadMembers(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x","params":{"id":"7"},"id":1}`), 30)
	f.Add([]byte(`{"a":[1,2,{"b":"\""}],"c":true}`), 10)
	f.Fuzz(func(t *testing.T, doc []byte, cut int) {
		if !json.Valid(doc) {
			return
		}
		var whole []string
		if !RawMembers(doc, func(name []byte, value json.RawMessage) { whole = append(whole, string(name)+"="+string(value)) }) {
			return
		}
		got := headNames(string(doc))
		if len(whole) > 0 && !slices.Equal(got, whole) {
			t.Fatalf("HeadMembers(%s) = %q; RawMembers gives %q", doc, got, whole)
		}
		if cut < 0 || cut > len(doc) {
			return
		}
		part := headNames(string(doc[:cut]))
		if len(part) > len(got) || !slices.Equal(part, got[:len(part)]) {
			t.Fatalf("HeadMembers(%s) = %q, not a prefix of %q", doc[:cut], part, got)
		}
	})
}
