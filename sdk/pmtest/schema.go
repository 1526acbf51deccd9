package pmtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/symposium-dev/symposium-pm/sdk/framing"
	"github.com/symposium-dev/symposium-pm/sdk/pmtest/internal/jsonschema"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// schemaLog validates every message the PM under test sends, in every run
// of the suite, against the protocol's JSON Schema (docs/protocol.schema.json,
// embedded in package protocol), and keeps what does not match for the
// "schema" check. A response is validated against the definition of the
// method its id answers, <Method>Response, or NullIDResponse for a null id;
// an answer to a method outside the protocol is left to the unknown-method
// check. A nil *schemaLog records nothing.
type schemaLog struct {
	schema *jsonschema.Schema // the compiled definitions
	err    error              // the schema could not be compiled

	mu         sync.Mutex
	methods    map[*proc]map[string]string // per run: request id key → method
	checked    int
	unchecked  int          // answers to methods outside the protocol
	violations []*violation // distinct violations, in the order first seen
	failed     int
}

// violation is one way messages broke the schema: the definition and the
// causes, with how many messages did so and the first of them.
type violation struct {
	def, causes string
	count       int
	first       string // what the first message answered
	line        []byte
}

// maxViolations is how many distinct violations the schema check describes.
const maxViolations = 5

// newSchemaLog compiles the definitions the check validates against.
func newSchemaLog() *schemaLog {
	l := &schemaLog{methods: map[*proc]map[string]string{}}
	set, err := jsonschema.Compile(protocol.SchemaJSON())
	if err != nil {
		l.err = fmt.Errorf("compiling the protocol schema: %w", err)
		return l
	}
	defs := []string{"NullIDResponse", "DiagnosticNotification"}
	for _, m := range protocol.Methods {
		defs = append(defs, responseDef(m))
	}
	for _, d := range defs {
		if !set.Has(d) {
			l.err = fmt.Errorf("compiling the protocol schema: it has no definition %s", d)
			return l
		}
	}
	l.schema = set
	return l
}

// responseDef names the schema definition of method's response:
// active_plugins → ActivePluginsResponse.
func responseDef(method string) string {
	var b strings.Builder
	for _, part := range strings.Split(method, "_") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String() + "Response"
}

// sent notes the method of a request line written to p, so that its
// answer is validated against that method's response.
func (l *schemaLog) sent(p *proc, line []byte) {
	if l == nil {
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(line, &req) != nil || req.Method == "" {
		return
	}
	key := framing.IDKey(req.ID)
	if key == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.methods[p] == nil {
		l.methods[p] = map[string]string{}
	}
	l.methods[p][key] = req.Method
}

// received validates one message line p wrote.
func (l *schemaLog) received(p *proc, line []byte) {
	if l == nil || l.err != nil {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	json.Unmarshal(line, &msg)
	if msg.Method != nil && msg.ID == nil {
		l.notification(p, line)
		return
	}
	key := framing.IDKey(msg.ID)
	l.mu.Lock()
	method, known := l.methods[p][key]
	delete(l.methods[p], key)
	l.mu.Unlock()
	def, what := "NullIDResponse", "response with a null id"
	switch {
	case key == "":
	case !known:
		// An id never sent: the connection breaks on it, and the check
		// that sent the request reports it.
		return
	case !slices.Contains(protocol.Methods, method):
		l.mu.Lock()
		l.unchecked++
		l.mu.Unlock()
		return
	default:
		def, what = responseDef(method), fmt.Sprintf("response to %s (id %s)", method, key)
	}
	inst, err := jsonschema.Decode(line)
	if err != nil {
		return // not JSON: deliver reports it
	}
	causes, err := l.schema.Validate(def, inst)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checked++
	if err == nil && len(causes) == 0 {
		return
	}
	l.violateLocked(def, violationCauses(causes, err), what, line)
}

// notification validates a notification p sent: the protocol's only one is
// the diagnostic (docs/protocol.md §4.7), which must match
// #/$defs/DiagnosticNotification, fit in protocol.MaxDiagnosticSize, and
// name a request in flight (sent and not answered yet: a diagnostic comes
// before its request's response).
func (l *schemaLog) notification(p *proc, line []byte) {
	const def = "DiagnosticNotification"
	var n struct {
		Method string `json:"method"`
		Params struct {
			Request json.RawMessage `json:"request"`
		} `json:"params"`
	}
	json.Unmarshal(line, &n)
	what := fmt.Sprintf("notification %q", n.Method)
	key := framing.IDKey(n.Params.Request)
	l.mu.Lock()
	_, inFlight := l.methods[p][key]
	l.mu.Unlock()
	var causes string
	if inst, err := jsonschema.Decode(line); err != nil {
		return // not JSON: deliver reports it
	} else if cs, err := l.schema.Validate(def, inst); err != nil || len(cs) > 0 {
		causes = violationCauses(cs, err)
	}
	switch {
	case causes != "":
	case len(line) > protocol.MaxDiagnosticSize:
		causes = fmt.Sprintf("the line is %d bytes, over the limit of %d", len(line), protocol.MaxDiagnosticSize)
	case !inFlight:
		causes = fmt.Sprintf("at /params/request: %s names no request in flight (a diagnostic must come before the response of a request the host sent)", key)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checked++
	if causes != "" {
		l.violateLocked(def, causes, what, line)
	}
}

// violateLocked records a violation; the caller holds l.mu.
func (l *schemaLog) violateLocked(def, causes, what string, line []byte) {
	l.failed++
	for _, v := range l.violations {
		if v.def == def && v.causes == causes {
			v.count++
			return
		}
	}
	l.violations = append(l.violations, &violation{def: def, causes: causes, count: 1, first: what, line: slices.Clone(line)})
}

// violationCauses renders the causes of a validation failure, or the
// error that kept it from running.
func violationCauses(causes []jsonschema.Cause, err error) string {
	if err != nil {
		return err.Error()
	}
	return jsonschema.Describe(causes)
}

// schemaCheck reports the messages of the whole run that do not match the
// schema.
func (s *suite) schemaCheck() {
	const name = "schema"
	l := s.cfg.schema
	if l.err != nil {
		s.fail(name, "%v", l.err)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed > 0 {
		var parts []string
		for i, v := range l.violations {
			if i == maxViolations {
				parts = append(parts, fmt.Sprintf("and %d other kinds of violation", len(l.violations)-i))
				break
			}
			times := ""
			if v.count > 1 {
				times = fmt.Sprintf(" (and %d more like it)", v.count-1)
			}
			parts = append(parts, fmt.Sprintf("%s%s violates #/$defs/%s: %s; the message: %s", v.first, times, v.def, v.causes, quote(v.line)))
		}
		verb := "do"
		if l.failed == 1 {
			verb = "does"
		}
		s.fail(name, "%s of %d the PM sent %s not match the protocol's JSON Schema (docs/protocol.schema.json): %s",
			plural(l.failed, "message", "messages"), l.checked, verb, strings.Join(parts, " | "))
		return
	}
	msg := fmt.Sprintf("all %s the PM sent match the protocol's JSON Schema (docs/protocol.schema.json)", plural(l.checked, "message", "messages"))
	if l.unchecked > 0 {
		msg += fmt.Sprintf("; %s to methods outside the protocol left to unknown-method", plural(l.unchecked, "answer", "answers"))
	}
	s.pass(name, "%s", msg)
}
