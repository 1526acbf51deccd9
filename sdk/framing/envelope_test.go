package framing

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// checkEnvelope fails when plainEnvelope takes msg and gives anything but
// what json.Unmarshal gives, and reports whether it took it.
func checkEnvelope(t *testing.T, msg []byte) bool {
	t.Helper()
	got, ok := plainEnvelope(msg)
	if !ok {
		return false
	}
	var want Envelope
	if err := json.Unmarshal(msg, &want); err != nil {
		t.Fatalf("plainEnvelope(%q) = %+v, json.Unmarshal fails: %v", msg, got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("plainEnvelope(%q) = %+v, json.Unmarshal %+v", msg, got, want)
	}
	return true
}

func TestEnvelopes(t *testing.T) {
	tests := []struct {
		msg   string
		want  []Envelope
		plain bool // the fast path takes it
	}{
		{`{"jsonrpc":"2.0","id":7,"method":"active_plugins","params":{"deps":[{"pm":"npm","name":"a"}]}}`,
			[]Envelope{{JSONRPC: "2.0", ID: json.RawMessage("7"), Method: "active_plugins"}}, true},
		{` {"method":"m\u00e9","id":"a\"b","jsonrpc":null,"x":[1,{"id":2}]}`,
			[]Envelope{{ID: json.RawMessage(`"a\"b"`), Method: "mé"}}, true},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":1}}`, []Envelope{{JSONRPC: "2.0", ID: json.RawMessage("null")}}, true},
		{`{}`, []Envelope{{}}, true},

		// Left to encoding/json, which decides.
		{`{"ID":3,"Method":"m"}`, []Envelope{{ID: json.RawMessage("3"), Method: "m"}}, false},
		{`{"\u0069d":3}`, []Envelope{{ID: json.RawMessage("3")}}, false},
		{`{"id":1,"id":2}`, []Envelope{{ID: json.RawMessage("2")}}, false},
		{`{"method":3}`, nil, false},
		{`{"jsonrpc":"2.0","id":1`, nil, false},
		{`null`, []Envelope{{}}, false},
		{`"x"`, nil, false},
		{`[{"id":1},{"id":2,"method":"n"}]`, []Envelope{{ID: json.RawMessage("1")}, {ID: json.RawMessage("2"), Method: "n"}}, false},
	}
	for _, tc := range tests {
		if got := checkEnvelope(t, []byte(tc.msg)); got != tc.plain {
			t.Errorf("plainEnvelope(%s) took it: %v, want %v", tc.msg, got, tc.plain)
		}
		if got := Envelopes([]byte(tc.msg)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Envelopes(%s) = %+v, want %+v", tc.msg, got, tc.want)
		}
	}
}

// The id Envelopes returns is its own copy: the sender may reuse msg.
func TestEnvelopesCopiesID(t *testing.T) {
	msg := []byte(`{"jsonrpc":"2.0","id":"abc","method":"m"}`)
	envs := Envelopes(msg)
	for i := range msg {
		msg[i] = ' '
	}
	if len(envs) != 1 || string(envs[0].ID) != `"abc"` {
		t.Fatalf("the envelope changed with the message: %+v", envs)
	}
}

func FuzzEnvelope(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":7,"method":"list_deps","params":{}}`))
	f.Add([]byte(`{"jsonrpc":null,"id":"x","Method":"m"}`))
	f.Add([]byte(`{"jſonrpc":"2.0"}`))
	f.Fuzz(func(t *testing.T, msg []byte) {
		checkEnvelope(t, msg)
	})
}

// BenchmarkEnvelopes: the host noting the id of an active_plugins request
// it sends, with 1,000 dependencies in its params; "unmarshal" is what
// Envelopes did before its fast path, side by side.
func BenchmarkEnvelopes(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":2,"method":"active_plugins","params":{"deps":[`)
	for i := range 1000 {
		if i > 0 {
			msg = append(msg, ',')
		}
		msg = fmt.Appendf(msg, `{"pm":"npm","name":"pkg-%04d","version":"1.0.%d"}`, i, i%7)
	}
	msg = append(msg, "]}}"...)
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			if envs := Envelopes(msg); len(envs) != 1 || !envs[0].IsCall() {
				b.Fatal(envs)
			}
		}
	})
	b.Run("unmarshal", func(b *testing.B) {
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			var e Envelope
			if json.Unmarshal(msg, &e) != nil || !e.IsCall() {
				b.Fatal(e)
			}
		}
	})
}
