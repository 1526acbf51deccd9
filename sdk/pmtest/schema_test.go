package pmtest

import (
	"regexp"
	"testing"

	"github.com/symposium-dev/symposium-pm/sdk/internal/schemacases"
)

// TestSchemaLog feeds request and response lines through a schemaLog and
// checks the verdict of the schema check on them. The validator's own
// tests (internal/jsonschema) hold the same lines to an oracle.
func TestSchemaLog(t *testing.T) {
	for _, tt := range schemacases.Exchanges() {
		t.Run(tt.Name, func(t *testing.T) {
			l := newSchemaLog()
			if l.err != nil {
				t.Fatal(l.err)
			}
			p := &proc{}
			for _, r := range tt.Requests {
				l.sent(p, []byte(r))
			}
			for _, a := range tt.Answers {
				l.received(p, []byte(a))
			}
			s := &suite{cfg: &config{schema: l}, report: &Report{}}
			s.schemaCheck()
			want := Fail
			if tt.Pass {
				want = Pass
			}
			res := s.report.Results[0]
			if res.Status != want || !regexp.MustCompile(tt.Message).MatchString(res.Message) {
				t.Errorf("schema check: %s %s\nwant %s matching %s", res.Status, res.Message, want, tt.Message)
			}
		})
	}
}
