// Package schemacases holds the messages the protocol's schema is tested
// on: the exchanges pmtest's "schema" check is tested on (the requests a
// host sent, the lines a PM answered, and the check's verdict on them), and
// a request per method built from the Go parameter types. pmtest's tests
// feed the exchanges through the check; the tests of the check's validator
// (pmtest/internal/jsonschema) and of the schema itself (protocol) hold
// these lines to the oracle validator. They are in a package of their own
// so that all use the same cases while pmtest's test binary, which
// re-executes itself as a PM, does not link the oracle.
package schemacases

import (
	"encoding/json"

	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// GoRequests returns, for each method of protocol.Methods, the request
// line a host builds from the method's Go parameter type; the i-th method's
// id is i+1.
func GoRequests() map[string][]byte {
	pkg := protocol.PackageID{PM: "cargo", Name: "serde", Version: "^1"}
	params := map[string]any{
		protocol.MethodInitialize:    protocol.InitializeParams{ProtocolVersion: protocol.Version, Workspace: "/w", CacheDir: "/c", Env: map[string]string{"HOME": "/h"}},
		protocol.MethodActivePlugins: protocol.ActivePluginsParams{Deps: []protocol.PackageID{pkg}},
		protocol.MethodLoadPlugin:    protocol.LoadPluginParams{ID: pkg},
		protocol.MethodListDeps:      struct{}{},
		protocol.MethodSearch:        protocol.SearchParams{Query: "serde"},
		protocol.MethodFetch:         protocol.FetchParams{ID: pkg, Update: protocol.UpdateCheck},
		protocol.MethodRefresh:       protocol.RefreshParams{Update: protocol.UpdateNone, Force: true},
		protocol.MethodWorkspace:     struct{}{},
	}
	out := map[string][]byte{}
	for i, m := range protocol.Methods {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": m, "params": params[m]})
		if err != nil {
			panic(err) // the types above always encode
		}
		out[m] = b
	}
	return out
}

// Exchange is what a host sent, what the PM answered, and the schema
// check's verdict on the answers.
type Exchange struct {
	Name     string
	Requests []string // request lines, in the order sent
	Answers  []string // the PM's lines, in the order written
	Pass     bool     // whether the check passes
	Message  string   // a regular expression the check's message matches
}

// id is a package id for the answers.
const id = `{"pm":"x","name":"a","version":"1.0.0"}`

// Exchanges returns the cases, a new slice at each call.
func Exchanges() []Exchange {
	return []Exchange{
		{"valid", []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
			`{"jsonrpc":"2.0","id":"s-2","method":"active_plugins","params":{"deps":[]}}`,
			`{"jsonrpc":"2.0","id":3,"method":"fetch","params":{}}`,
			`{"jsonrpc":"2.0","id":4,"method":"no_such_method"}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"x","capabilities":[]}}`,
			`{"jsonrpc":"2.0","id":"s-2","result":[{"id":` + id + `,"root":"/r","manifest":{"name":"a","future-key":1}}]}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32010,"message":"no a","data":{"id":` + id + `}}}`,
			`{"jsonrpc":"2.0","id":4,"result":null}`,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
		}, true, `^all 4 messages the PM sent match the protocol's JSON Schema \(docs/protocol.schema.json\); 1 answer to methods outside the protocol left to unknown-method$`},
		{"extra field in an id", []string{
			`{"jsonrpc":"2.0","id":1,"method":"list_deps","params":{}}`,
			`{"jsonrpc":"2.0","id":2,"method":"list_deps","params":{}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"result":[{"pm":"x","name":"a","version":"1","channel":"beta"}]}`,
			`{"jsonrpc":"2.0","id":2,"result":[{"pm":"x","name":"a","version":"1","channel":"beta"}]}`,
		}, false, `^2 messages of 2 the PM sent do not match .*: response to list_deps \(id 1\) \(and 1 more like it\) violates #/\$defs/ListDepsResponse: at /result/0: additional properties 'channel' not allowed; the message: `},
		{"mistyped field", []string{
			`{"jsonrpc":"2.0","id":7,"method":"refresh","params":{"update":"none","force":false}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":7,"result":{"refreshed":"yes"}}`,
		}, false, `^1 message of 1 the PM sent does not match .*: response to refresh \(id 7\) violates #/\$defs/RefreshResponse: at /result/refreshed: got string, want boolean; the message: `},
		{"error data of the wrong shape", []string{
			`{"jsonrpc":"2.0","id":1,"method":"fetch","params":{}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32013,"message":"bad sum","data":{"id":` + id + `,"expected":"a"}}}`,
		}, false, `at /error/data: missing property 'actual'`},
		{"result and error", []string{
			`{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"a"}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"result":[],"error":{"code":-32603,"message":"x"}}`,
		}, false, `response to search \(id 1\) violates #/\$defs/SearchResponse: at /: 'oneOf' failed, subschemas 0, 1 matched`},
		{"null id with a result", nil, []string{
			`{"jsonrpc":"2.0","id":null,"result":[]}`,
		}, false, `response with a null id violates #/\$defs/NullIDResponse: at /: (additional properties 'result' not allowed|missing property 'error')`},
		{"a diagnostic before its answer", []string{
			`{"jsonrpc":"2.0","id":4,"method":"list_deps"}`,
		}, []string{
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":4,"message":"skipped a.lock","file":"/w/a.lock","line":2}}`,
			`{"jsonrpc":"2.0","id":4,"result":[]}`,
		}, true, `^all 2 messages the PM sent match`},
		{"a malformed diagnostic", []string{
			`{"jsonrpc":"2.0","id":4,"method":"list_deps"}`,
		}, []string{
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":4,"message":7}}`,
			`{"jsonrpc":"2.0","id":4,"result":[]}`,
		}, false, `notification "diagnostic" violates #/\$defs/DiagnosticNotification: at /params/message: got number, want string`},
		{"a diagnostic for a request not in flight", []string{
			`{"jsonrpc":"2.0","id":4,"method":"list_deps"}`,
		}, []string{
			`{"jsonrpc":"2.0","id":4,"result":[]}`,
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":4,"message":"late"}}`,
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":"x","message":"never sent"}}`,
		}, false, `at /params/request: 4 names no request in flight.*\| .*"x" names no request in flight`},
		{"another notification", nil, []string{
			`{"jsonrpc":"2.0","method":"progress","params":{"request":1,"message":"m"}}`,
		}, false, `violates #/\$defs/DiagnosticNotification: at /method: value must be 'diagnostic'`},
		{"key with a slash", []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"x","capabilities":[],"a/b~c":1}}`,
		}, false, `at /result: additional properties 'a/b~c' not allowed`},
	}
}
