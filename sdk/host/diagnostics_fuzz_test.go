package host

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/internal/printable"
)

// FuzzDiagnosticNotification feeds hostile notification lines to a
// connection's diagnostic box, with request 1 in flight: it never panics,
// keeps within the per-request bounds, and what it returns is valid UTF-8
// without control characters other than newline and tab.
func FuzzDiagnosticNotification(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","file":"/f","line":2,"package":{"pm":"a","name":"b","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":"1","message":"\u001b[2J"}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":5}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":{"request":1,"message":"m","line":-1,"level":[]}}`,
		`{"jsonrpc":"2.0","method":"diagnostic","params":[]}`,
		`{"jsonrpc":"2.0","method":"diagnostic"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		b := newDiagBox()
		b.sent([]framing.Envelope{{JSONRPC: "2.0", ID: json.RawMessage("1"), Method: "list_deps"}})
		var env framing.Envelope
		if json.Unmarshal([]byte(line), &env) != nil || !strings.HasPrefix(line, "{") {
			return // the channel hands only JSON objects here
		}
		for range 3 {
			b.notification(env.Method, []byte(line))
		}
		b.response(json.RawMessage("1"))
		for _, d := range b.collect("1") {
			for _, s := range []string{d.Message, d.File} {
				if !utf8.ValidString(s) || printable.String(s) != s {
					t.Fatalf("unsanitized text %q", s)
				}
			}
		}
	})
}
