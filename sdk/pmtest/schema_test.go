package pmtest

import (
	"regexp"
	"testing"
)

// schemaLogCase is requests the host sent, the lines the PM answered, and
// the schema check's verdict on them.
type schemaLogCase struct {
	name     string
	requests []string
	answers  []string
	status   Status
	message  string // regexp
}

// schemaLogID is a package id for the answers of schemaLogCases.
const schemaLogID = `{"pm":"x","name":"a","version":"1.0.0"}`

// schemaLogCases are the cases of TestSchemaLog; the differential test
// validates their lines with the oracle too.
var schemaLogCases = func() []schemaLogCase {
	id := schemaLogID
	return []schemaLogCase{
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
		}, Pass, `^all 4 messages the PM sent match the protocol's JSON Schema \(docs/protocol.schema.json\); 1 answer to methods outside the protocol left to unknown-method$`},
		{"extra field in an id", []string{
			`{"jsonrpc":"2.0","id":1,"method":"list_deps","params":{}}`,
			`{"jsonrpc":"2.0","id":2,"method":"list_deps","params":{}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"result":[{"pm":"x","name":"a","version":"1","channel":"beta"}]}`,
			`{"jsonrpc":"2.0","id":2,"result":[{"pm":"x","name":"a","version":"1","channel":"beta"}]}`,
		}, Fail, `^2 messages of 2 the PM sent do not match .*: response to list_deps \(id 1\) \(and 1 more like it\) violates #/\$defs/ListDepsResponse: at /result/0: additional properties 'channel' not allowed; the message: `},
		{"mistyped field", []string{
			`{"jsonrpc":"2.0","id":7,"method":"refresh","params":{"update":"none","force":false}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":7,"result":{"refreshed":"yes"}}`,
		}, Fail, `^1 message of 1 the PM sent does not match .*: response to refresh \(id 7\) violates #/\$defs/RefreshResponse: at /result/refreshed: got string, want boolean; the message: `},
		{"error data of the wrong shape", []string{
			`{"jsonrpc":"2.0","id":1,"method":"fetch","params":{}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"error":{"code":-32013,"message":"bad sum","data":{"id":` + id + `,"expected":"a"}}}`,
		}, Fail, `at /error/data: missing property 'actual'`},
		{"result and error", []string{
			`{"jsonrpc":"2.0","id":1,"method":"search","params":{"query":"a"}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"result":[],"error":{"code":-32603,"message":"x"}}`,
		}, Fail, `response to search \(id 1\) violates #/\$defs/SearchResponse: at /: 'oneOf' failed, subschemas 0, 1 matched`},
		{"null id with a result", nil, []string{
			`{"jsonrpc":"2.0","id":null,"result":[]}`,
		}, Fail, `response with a null id violates #/\$defs/NullIDResponse: at /: (additional properties 'result' not allowed|missing property 'error')`},
		{"a diagnostic before its answer", []string{
			`{"jsonrpc":"2.0","id":4,"method":"list_deps"}`,
		}, []string{
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":4,"message":"skipped a.lock","file":"/w/a.lock","line":2}}`,
			`{"jsonrpc":"2.0","id":4,"result":[]}`,
		}, Pass, `^all 2 messages the PM sent match`},
		{"a malformed diagnostic", []string{
			`{"jsonrpc":"2.0","id":4,"method":"list_deps"}`,
		}, []string{
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":4,"message":7}}`,
			`{"jsonrpc":"2.0","id":4,"result":[]}`,
		}, Fail, `notification "diagnostic" violates #/\$defs/DiagnosticNotification: at /params/message: got number, want string`},
		{"a diagnostic for a request not in flight", []string{
			`{"jsonrpc":"2.0","id":4,"method":"list_deps"}`,
		}, []string{
			`{"jsonrpc":"2.0","id":4,"result":[]}`,
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":4,"message":"late"}}`,
			`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":"x","message":"never sent"}}`,
		}, Fail, `at /params/request: 4 names no request in flight.*\| .*"x" names no request in flight`},
		{"another notification", nil, []string{
			`{"jsonrpc":"2.0","method":"progress","params":{"request":1,"message":"m"}}`,
		}, Fail, `violates #/\$defs/DiagnosticNotification: at /method: value must be 'diagnostic'`},
		{"key with a slash", []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		}, []string{
			`{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"name":"x","capabilities":[],"a/b~c":1}}`,
		}, Fail, `at /result: additional properties 'a/b~c' not allowed`},
	}
}()

// TestSchemaLog feeds request and response lines through a schemaLog and
// checks the verdict of the schema check on them.
func TestSchemaLog(t *testing.T) {
	for _, tt := range schemaLogCases {
		t.Run(tt.name, func(t *testing.T) {
			l := newSchemaLog()
			if l.err != nil {
				t.Fatal(l.err)
			}
			p := &proc{}
			for _, r := range tt.requests {
				l.sent(p, []byte(r))
			}
			for _, a := range tt.answers {
				l.received(p, []byte(a))
			}
			s := &suite{cfg: &config{schema: l}, report: &Report{}}
			s.schemaCheck()
			res := s.report.Results[0]
			if res.Status != tt.status || !regexp.MustCompile(tt.message).MatchString(res.Message) {
				t.Errorf("schema check: %s %s\nwant %s matching %s", res.Status, res.Message, tt.status, tt.message)
			}
		})
	}
}

func TestJSONPointer(t *testing.T) {
	for _, tt := range []struct {
		tokens []string
		want   string
	}{{nil, "/"}, {[]string{"result", "0", "id"}, "/result/0/id"}, {[]string{"a/b", "c~d"}, "/a~1b/c~0d"}} {
		if got := jsonPointer(tt.tokens); got != tt.want {
			t.Errorf("jsonPointer(%q) = %q, want %q", tt.tokens, got, tt.want)
		}
	}
}
