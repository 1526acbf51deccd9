package pmserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/symposium-dev/symposium-pm/sdk/jsonscan"
	"github.com/symposium-dev/symposium-pm/sdk/protocol"
)

// Admission: what the harness does with each line it reads, before any
// handler sees it. These are protocol rules, and `symposium-pm check` holds
// every PM to them:
//
//   - Every request read gets exactly one answer before the PM exits, however
//     malformed, and nothing else is answered.
//   - A line that is not valid UTF-8 is not JSON (JSON text is UTF-8): it gets
//     one -32700 error with a null id, and no byte of it is ever echoed, so
//     the PM's output stays valid UTF-8.
//   - A line that is not valid JSON gets one -32700 error with a null id whose
//     message says so, with the column.
//   - A JSON value that is not a valid request gets one -32600 error: under
//     the request's id when it has a string or number id, else under a null
//     id. Valid means: an object with "jsonrpc":"2.0", a string "method", an
//     "id" that is a string or a number (absent for a notification),
//     "params" absent, null, an object or an array, and no other member.
//   - A batch (a JSON array) is refused, never executed: its answer is one
//     array holding one -32600 error per element that expects an answer
//     (each under its id, or a null id for an element that is not a valid
//     request); an empty array gets a single -32600 error with a null id. The
//     protocol's requests are sent one per line; refusing batches keeps the
//     initialize barrier and the one-answer-per-request rule simple.
//   - A notification (a valid request without an id) is ignored: the
//     protocol defines none, so nothing runs and nothing is answered.
//   - A request whose id equals that of a request still being answered gets
//     -32600 under that id; the earlier request is still answered.

// verdict is what admission decided about one line.
type verdict struct {
	// forward is set for a valid request to hand to the handlers.
	forward bool
	// id is the raw id of a forwarded request.
	id json.RawMessage
	// method is the method of a forwarded request, and rawMethod the same
	// as written.
	method    string
	rawMethod json.RawMessage
	// params are the params of a forwarded request as written, nil when
	// absent or null.
	params json.RawMessage
	// answer, when not nil, is the response to write for the line.
	answer []byte
	// note explains a line that is neither forwarded nor answered.
	note string
}

// errorResponse is a JSON-RPC error response.
type errorResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   protocol.Error  `json:"error"`
}

func newErrorResponse(id json.RawMessage, code protocol.Code, message string) errorResponse {
	if len(id) == 0 || !utf8.Valid(id) || !json.Valid(id) {
		// No id, or one that cannot be echoed (not JSON: the head of an
		// oversize line cut it, or it never was): a null id.
		id = json.RawMessage("null")
	}
	return errorResponse{JSONRPC: "2.0", ID: id, Error: protocol.Error{Code: code, Message: message}}
}

func marshalAnswer(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a raw id could fail to marshal, and ids are validated first.
		b, _ = json.Marshal(newErrorResponse(nil, protocol.CodeInternalError, "internal error: cannot encode the answer"))
	}
	return b
}

// admit decides what to do with one line read from the host.
func admit(line []byte) verdict {
	if !utf8.Valid(line) {
		return verdict{answer: marshalAnswer(newErrorResponse(nil, protocol.CodeParseError, invalidUTF8(line)))}
	}
	trimmed := bytes.TrimLeft(line, " \t\r\n")
	if !jsonscan.Valid(trimmed) {
		return verdict{answer: marshalAnswer(newErrorResponse(nil, protocol.CodeParseError, invalidJSON(trimmed)))}
	}
	if trimmed[0] == '[' {
		return admitBatch(trimmed)
	}
	r := checkRequest(trimmed)
	switch {
	case r.problem != "":
		return verdict{answer: marshalAnswer(newErrorResponse(r.id, protocol.CodeInvalidRequest, "invalid request: "+r.problem))}
	case r.id == nil:
		return verdict{note: fmt.Sprintf("ignoring a notification (a request without an id) for method %q: the protocol defines none, so it is neither run nor answered", r.method)}
	}
	return verdict{forward: true, id: r.id, method: r.method, rawMethod: r.rawMethod, params: r.params}
}

// envelope returns the message the channel hands jrpc2 for the forwarded
// request v: its id and method, without its params. The params stay with
// the channel for the handler (see lineChannel.takeParams), so jrpc2 does
// not decode, check and copy a line admission has already checked (twice
// more for a whole active_plugins request); jrpc2 only dispatches.
func envelope(v verdict) []byte {
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"method":`
	b := make([]byte, 0, len(head)+len(v.id)+len(mid)+len(v.rawMethod)+1)
	b = append(append(append(append(b, head...), v.id...), mid...), v.rawMethod...)
	return append(b, '}')
}

// admitBatch refuses a batch.
func admitBatch(msg []byte) verdict {
	var elems []json.RawMessage
	if err := json.Unmarshal(msg, &elems); err != nil {
		return verdict{answer: marshalAnswer(newErrorResponse(nil, protocol.CodeParseError, invalidJSON(msg)))}
	}
	if len(elems) == 0 {
		return verdict{answer: marshalAnswer(newErrorResponse(nil, protocol.CodeInvalidRequest, "invalid request: an empty batch holds no request"))}
	}
	answers := []errorResponse{}
	for i, e := range elems {
		r := checkRequest(e)
		switch {
		case r.problem != "":
			answers = append(answers, newErrorResponse(r.id, protocol.CodeInvalidRequest,
				fmt.Sprintf("invalid request: batch element %d: %s", i+1, r.problem)))
		case r.id != nil:
			answers = append(answers, newErrorResponse(r.id, protocol.CodeInvalidRequest,
				fmt.Sprintf("invalid request: batches are not supported; %q (batch element %d) was not run: send each request on its own line", r.method, i+1)))
		}
	}
	if len(answers) == 0 {
		return verdict{note: fmt.Sprintf("ignoring a batch of %d notifications: batches are not supported", len(elems))}
	}
	return verdict{answer: marshalAnswer(answers)}
}

// checked is the outcome of checking one request object.
type checked struct {
	id      json.RawMessage // string or number id, or nil
	method  string
	problem string // why it is not a valid request, or ""
	// rawMethod is the method as written (a JSON string), and params the
	// params as written, nil when absent or null: what jrpc2 would take
	// from the request (see envelope).
	rawMethod json.RawMessage
	params    json.RawMessage
}

// requestMembers are the members a request may have.
var requestMembers = []string{"jsonrpc", "id", "method", "params"}

// checkRequest checks one JSON value (known to be valid JSON) as a request.
// It reads the object's members in place (see jsonscan.Members) rather than
// decoding them into a map, which copied the params and scanned the line
// twice more; the outcome is the same.
func checkRequest(raw json.RawMessage) checked {
	var id, v, m, p json.RawMessage
	var extra []string
	isObject := jsonscan.Members(raw, func(name string, value json.RawMessage) {
		switch name {
		case "id":
			id = value
		case "jsonrpc":
			v = value
		case "method":
			m = value
		case "params":
			p = value
		default:
			extra = append(extra, name)
		}
	})
	if !isObject {
		return checked{problem: fmt.Sprintf("a request is a JSON object, not %s", kind(raw))}
	}
	var c checked
	if id != nil {
		switch k := kind(id); k {
		case "a string", "a number":
			c.id = id
		default:
			c.problem = fmt.Sprintf(`"id" must be a string or a number, not %s`, k)
			return c
		}
	}
	var version string
	switch {
	case v == nil:
		c.problem = `the request has no "jsonrpc" member; it must be "2.0"`
		return c
	case json.Unmarshal(v, &version) != nil || version != "2.0":
		c.problem = fmt.Sprintf(`"jsonrpc" must be "2.0", not %s`, show(v))
		return c
	}
	switch {
	case m == nil:
		c.problem = `the request has no "method" member`
		return c
	case json.Unmarshal(m, &c.method) != nil:
		c.problem = fmt.Sprintf(`"method" must be a string, not %s`, kind(m))
		return c
	case c.method == "":
		c.problem = `"method" is empty`
		return c
	}
	c.rawMethod = m
	if p != nil {
		switch k := kind(p); k {
		case "an object", "an array":
			c.params = p
		case "null":
		default:
			c.problem = fmt.Sprintf(`"params" must be an object or an array, not %s`, k)
			return c
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		c.problem = fmt.Sprintf("unknown member %q in the request (a request has only jsonrpc, id, method and params)", extra[0])
	}
	return c
}

// kind names the type of a valid JSON value in the user's terms.
func kind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// show renders a short JSON value as written, or its kind when long.
func show(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) <= 40 {
		return string(raw)
	}
	return kind(raw)
}

// invalidUTF8 describes where line stops being UTF-8.
func invalidUTF8(line []byte) string {
	col := 1
	for i := 0; i < len(line); {
		r, n := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && n <= 1 {
			return fmt.Sprintf("parse error: the message is not valid UTF-8 (byte 0x%02x at column %d), so it is not JSON", line[i], col)
		}
		i += n
		col++
	}
	return "parse error: the message is not valid UTF-8, so it is not JSON"
}

// invalidJSON describes why msg is not valid JSON, with the column.
func invalidJSON(msg []byte) string {
	var v any
	err := json.Unmarshal(msg, &v)
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se) && se.Offset >= int64(len(msg)):
		return fmt.Sprintf("parse error: the message is not valid JSON: it ends before the value is complete (column %d)", utf8.RuneCount(msg)+1)
	case errors.As(err, &se):
		col := utf8.RuneCount(msg[:max(se.Offset-1, 0)]) + 1
		return fmt.Sprintf("parse error: the message is not valid JSON: %s (column %d)", se.Error(), col)
	case err != nil:
		return fmt.Sprintf("parse error: the message is not valid JSON: %v", err)
	}
	return "parse error: the message is not valid JSON"
}
