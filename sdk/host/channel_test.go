package host

import (
	"encoding/json"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
)

// TestInPlace: which lines the channel reads in place (keeping the result
// for the call and handing jrpc2 a null result) and which go to jrpc2
// whole, as they always did.
func TestInPlace(t *testing.T) {
	for _, tc := range []struct {
		name, line string
		result     string // "": not read in place
	}{
		{"plain", `{"jsonrpc":"2.0","id":7,"result":{"offers":[]}}`, `{"offers":[]}`},
		{"any order, spaced", ` {"result" : [1, "}"] ,"id":7, "jsonrpc":"2.0"}`, `[1, "}"]`},
		{"string id", `{"jsonrpc":"2.0","id":"7","result":null}`, `null`},
		{"id not sent", `{"jsonrpc":"2.0","id":8,"result":{}}`, ""},
		{"error response", `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"m"}}`, ""},
		{"result and error", `{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"m"}}`, ""},
		{"extra member", `{"jsonrpc":"2.0","id":7,"result":{},"x":1}`, ""},
		{"repeated result", `{"jsonrpc":"2.0","id":7,"result":{},"result":{}}`, ""},
		{"escaped version", `{"jsonrpc":"2\u002e0","id":7,"result":{}}`, ""},
		{"old version", `{"jsonrpc":"1.0","id":7,"result":{}}`, ""},
		{"null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, ""},
		{"object id", `{"jsonrpc":"2.0","id":{"n":7},"result":{}}`, ""},
		{"notification", `{"jsonrpc":"2.0","method":"diagnostic","params":{}}`, ""},
		{"batch", `[{"jsonrpc":"2.0","id":7,"result":{}}]`, ""},
		{"not JSON", `{"jsonrpc":"2.0","id":7,"result":{}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newClientChannel(nil)
			c.diags.sent([]framing.Envelope{{JSONRPC: "2.0", ID: json.RawMessage(`7`), Method: "m"}, {JSONRPC: "2.0", ID: json.RawMessage(`"7"`), Method: "m"}})
			light, env, ok := c.inPlace([]byte(tc.line))
			if ok != (tc.result != "") {
				t.Fatalf("read in place: %v, want %v", ok, tc.result != "")
			}
			if !ok {
				if len(c.results) != 0 {
					t.Errorf("kept a result for a line not read in place: %v", c.results)
				}
				return
			}
			var back struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(light, &back); err != nil || back.JSONRPC != "2.0" || string(back.ID) != string(env.ID) || string(back.Result) != "null" {
				t.Errorf("jrpc2 is handed %s (%v), envelope id %s", light, err, env.ID)
			}
			got, kept := c.takeResult(string(env.ID))
			if !kept || string(got) != tc.result {
				t.Errorf("kept result %q (%v), want %q", got, kept, tc.result)
			}
			if _, again := c.takeResult(string(env.ID)); again {
				t.Error("the result is kept after it was taken")
			}
			c.diags.response(env.ID) // as Recv does once inPlace has read the line
			if _, _, twice := c.inPlace([]byte(tc.line)); twice {
				t.Error("a second answer to the same request is read in place too; it must go to jrpc2")
			}
		})
	}
}
